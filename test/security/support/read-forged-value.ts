/**
 * Run in a child process with a small heap by test/security/forged-chunk-header.test.ts: for each
 * `bytes:chunks` argument, writes the chunked-value header `{ zkPlanChunked: 1, bytes, chunks }`
 * into an in-memory ZooKeeper, reads it with readValue (the default limit), and prints one line of
 * JSON: what the read threw, how long it took and how much the heap grew. A reader that allocates
 * in proportion to the header dies of "heap out of memory" instead.
 */
import superjson from 'superjson';
import { MemoryZooKeeper } from '../../../src/testing/memory-zookeeper.js';
import { readValue } from '../../../src/zk/chunked-value.js';

const zk = new MemoryZooKeeper().connect({ name: 'forger' });
await zk.ensurePath('/plans/plan-0000000000/task-0000000000');
for (const [index, pair] of process.argv.slice(2).entries()) {
  const [bytes, chunks] = pair.split(':').map(Number);
  const path = `/plans/plan-0000000000/task-0000000000/arg-${String(index).padStart(10, '0')}`;
  await zk.create(
    path,
    Buffer.from(superjson.stringify({ zkPlanChunked: 1, bytes, chunks, sha256: '0'.repeat(64) })),
  );
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  let outcome: { code?: unknown; message?: unknown } = {};
  try {
    await readValue(zk, path);
  } catch (error) {
    outcome = { code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  const ms = performance.now() - started;
  const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
  process.stdout.write(`${JSON.stringify({ bytes, chunks, ...outcome, ms, heapGrowth })}\n`);
}
zk.close();
