/**
 * A ZooKeeper client process that keeps requests in flight from every turn of its event loop (up to
 * five `exists` calls per setImmediate, at most a thousand waiting), the way a busy worker does, for
 * integ/faults/connection-reset.
 * Started with the connect string as its argument; prints `ready` once connected. On SIGTERM it
 * waits until one more request is answered, prints `answered <n> of <n> requests` and exits 0.
 */
import { ZkClient } from '../../src/testing/index.js';

const connect = process.argv[2];
if (connect === undefined) throw new Error('usage: busy-client.ts <connect string>');
const client = await ZkClient.connect({
  connect,
  sessionTimeoutMs: 4_000,
  connectTimeoutMs: 20_000,
});
/**
 * At most this many requests wait for an answer at once. Without a bound the bursts queued a
 * hundred thousand requests or more, and on a loaded machine the answer the test waits for after
 * SIGTERM came too late (once: none of 50 920 in 20 s). A thousand still keeps requests in flight
 * on every turn, through every reset.
 */
const MAX_IN_FLIGHT = 1_000;
let sent = 0;
let answered = 0;
let settled = 0;
let stopping = false;

function burst(): void {
  if (stopping) return;
  for (let index = 0; index < 5 && sent - settled < MAX_IN_FLIGHT; index++) {
    sent += 1;
    client.exists('/').then(
      () => {
        answered += 1;
        settled += 1;
      },
      () => {
        settled += 1; // connection losses are what the test causes
      },
    );
  }
  setImmediate(burst);
}

process.on('SIGTERM', () => {
  stopping = true;
  // Answers again: one more of the requests already sent comes back. Waiting for a new request
  // instead would wait behind every request the bursts queued (a hundred thousand on a slow server).
  const before = answered;
  const waited = Date.now();
  const check = setInterval(() => {
    if (answered > before) {
      clearInterval(check);
      console.log(`answered ${answered} of ${sent} requests`);
      process.exit(0);
    }
    if (Date.now() - waited > 20_000) {
      clearInterval(check);
      console.log(`no answer within 20 s of SIGTERM (answered ${answered} of ${sent})`);
      process.exit(1);
    }
  }, 20);
});

console.log('ready');
burst();
