import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import superjson from 'superjson';
import type { InlineContext, InlineJob, ThreadMessage, ThrownReport } from './inline-protocol.js';

/** One run of inline function source. */
export interface InlineRun {
  readonly source: string;
  readonly ctx: InlineContext;
  readonly args: readonly unknown[];
  /** Time limit of the whole run (synchronous part, promises, callbacks), from the moment a ready thread has the job. */
  readonly timeoutMs: number;
  /** Largest encoded result that may come back; a larger one comes back as its size only. */
  readonly maxResultBytes: number;
  /** Aborting it terminates the run's thread at once; the run rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** How a run ended (an abort rejects instead, with the signal's reason). */
export type InlineOutcome =
  | { readonly kind: 'returned'; readonly value: unknown }
  /** What the function threw: an Error rebuilt with its name, message, stack and code, or the thrown value. */
  | { readonly kind: 'threw'; readonly thrown: unknown }
  /** It ran past `timeoutMs`: its thread was terminated. */
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'unserializable'; readonly problem: string }
  | { readonly kind: 'too-large'; readonly bytes: number }
  /** Its thread ended under it (an uncaught error in the thread, or code that got out of the sandbox and ended it). */
  | { readonly kind: 'thread-died'; readonly detail: string };

/**
 * Runs inline function source in a vm2 sandbox (no `require`, no `process`, no timers, no `eval`,
 * no WebAssembly) inside a worker thread, and terminates the thread when the run outlives
 * `timeoutMs` or `signal` aborts. Whatever the code does, in its synchronous part or in promise
 * callbacks, it can block only its thread: the worker's event loop (its ZooKeeper session, timers
 * and signal handlers) runs on. vm2 is defence in depth, not a security boundary: only trusted
 * writers should be able to create inline tasks.
 *
 * Threads are kept between runs (starting one, with vm2, takes a few hundred ms); every run gets a
 * fresh vm2 context. A thread is reused only while it answers: one that does not pick a job up
 * within PICKUP_MS (left spinning by code that returned first) is terminated, and the job goes to a
 * new thread. Rejects with an Error (not a task failure) when no thread can be started at all.
 */
export async function runInline(run: InlineRun): Promise<InlineOutcome> {
  const { signal } = run;
  signal?.throwIfAborted();
  const job: InlineJob = {
    id: ++jobSerial,
    source: run.source,
    ctx: { task: run.ctx.task, plan: run.ctx.plan, workerId: run.ctx.workerId },
    args: superjson.stringify(run.args),
    maxResultBytes: run.maxResultBytes,
  };
  const reused = idle.pop();
  if (reused !== undefined) {
    const outcome = await reused.run(job, run.timeoutMs, signal, PICKUP_MS);
    if (outcome !== 'not-picked-up') return outcome;
  }
  const thread = new InlineThread();
  await thread.started(signal);
  const outcome = await thread.run(job, run.timeoutMs, signal, undefined);
  if (outcome === 'not-picked-up') throw new Error('a new inline thread did not pick its job up'); // cannot happen without a pickup limit
  return outcome;
}

/** Threads of this process: live (started, not exited), busy with a run, idle in the pool; jobs and threads started so far. */
export function inlineThreadStats(): {
  live: number;
  busy: number;
  idle: number;
  jobs: number;
  spawned: number;
} {
  return {
    live: live.size,
    busy: live.size - idle.length,
    idle: idle.length,
    jobs: jobSerial,
    spawned,
  };
}

/** Terminates the idle threads (each also ends on its own after IDLE_MS) and resolves once they are gone. */
export async function stopIdleInlineThreads(): Promise<void> {
  await Promise.all(idle.splice(0).map((thread) => thread.terminate()));
}

/** How long a reused thread may take to pick a job up: an idle thread answers in microseconds; one that does not is stuck. */
const PICKUP_MS = 1_000;
/** Idle threads kept for the next runs; more are terminated when they finish. */
const MAX_IDLE = 8;
/** An idle thread unused this long is terminated. */
const IDLE_MS = 10_000;
/** The longest delay a Node timer takes (inlineTimeoutMs may be longer: up to vm2's former limit). */
const MAX_TIMER_MS = 2_147_483_647;

let jobSerial = 0;
let spawned = 0;
/** Threads started and not yet exited. */
const live = new Set<InlineThread>();
/** Ready threads without a job, the most recently used last. */
const idle: InlineThread[] = [];

class InlineThread {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private readonly exited: Promise<void>;
  private isReady = false;
  private hasExited = false;
  /** The current job's listener for the thread's messages and its death. */
  private onMessage: ((message: ThreadMessage) => void) | undefined;
  private onDeath: ((detail: string) => void) | undefined;
  private lastError: Error | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor() {
    this.worker = startWorker();
    spawned += 1;
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        this.hasExited = true;
        live.delete(this);
        removeIdle(this);
        clearTimeout(this.idleTimer);
        this.onDeath?.(
          this.lastError === undefined
            ? `its thread exited with code ${code}`
            : `its thread failed: ${this.lastError.message}`,
        );
        resolve();
      });
    });
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (message: ThreadMessage) => {
        if (message.type === 'ready') {
          this.isReady = true;
          resolve();
        } else {
          this.onMessage?.(message);
        }
      });
      void this.exited.then(() =>
        reject(
          new Error(
            `could not start a thread for inline code: ${this.lastError?.message ?? 'it exited'}`,
          ),
        ),
      );
    });
    this.ready.catch(() => undefined); // observed by started()
    this.worker.on('error', (error) => {
      this.lastError = error; // 'exit' follows
    });
  }

  /** Resolves once the thread has loaded its modules; on abort, terminates it and rejects with the reason. */
  async started(signal: AbortSignal | undefined): Promise<void> {
    if (this.isReady) return;
    let detach: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (signal === undefined) return;
      const onAbort = (): void => void this.terminate().then(() => reject(signal.reason as Error));
      signal.addEventListener('abort', onAbort, { once: true });
      detach = () => signal.removeEventListener('abort', onAbort);
    });
    try {
      await Promise.race([this.ready, aborted]);
    } finally {
      detach?.();
    }
  }

  /**
   * Runs `job` on this ready thread. 'not-picked-up' when `pickupMs` is given and the thread did
   * not take the job within it (the thread is then terminated, and the job never ran).
   */
  run(
    job: InlineJob,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    pickupMs: number | undefined,
  ): Promise<InlineOutcome | 'not-picked-up'> {
    clearTimeout(this.idleTimer);
    this.worker.ref();
    return new Promise((resolve, reject) => {
      let picked = false;
      let settled = false;
      const timers: (() => void)[] = [];
      const settle = (end: () => void, keep: boolean): void => {
        if (settled) return;
        settled = true;
        this.onMessage = undefined;
        this.onDeath = undefined;
        for (const clear of timers) clear();
        signal?.removeEventListener('abort', onAbort);
        if (keep) {
          this.release();
          end();
        } else {
          void this.terminate().then(end); // settles once the thread is gone
        }
      };
      const onAbort = (): void => settle(() => reject(signal?.reason as Error), false);
      this.onMessage = (message) => {
        if (!('id' in message) || message.id !== job.id) return;
        if (message.type === 'started') {
          picked = true;
          return;
        }
        const outcome = toOutcome(message);
        settle(() => resolve(outcome), true);
      };
      // A reused thread that dies before it took the job (left to die by its previous run): the job goes to a new one.
      this.onDeath = (detail) =>
        settle(
          () =>
            resolve(
              !picked && pickupMs !== undefined ? 'not-picked-up' : { kind: 'thread-died', detail },
            ),
          false,
        );
      timers.push(
        later(timeoutMs, () =>
          settle(
            () =>
              resolve(picked || pickupMs === undefined ? { kind: 'timed-out' } : 'not-picked-up'),
            false,
          ),
        ),
      );
      if (pickupMs !== undefined && pickupMs < timeoutMs) {
        timers.push(
          later(pickupMs, () => {
            if (!picked) settle(() => resolve('not-picked-up'), false);
          }),
        );
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.worker.postMessage(job);
    });
  }

  /** Back to the pool after a run, unless the pool is full or the thread died meanwhile. */
  private release(): void {
    if (this.hasExited) return;
    if (idle.length >= MAX_IDLE) {
      void this.terminate();
      return;
    }
    this.worker.unref(); // an idle thread never keeps the process alive
    this.idleTimer = setTimeout(() => {
      removeIdle(this);
      void this.terminate();
    }, IDLE_MS);
    this.idleTimer.unref();
    idle.push(this);
  }

  /** Terminates the thread (whatever it runs) and resolves once it has exited. */
  async terminate(): Promise<void> {
    removeIdle(this);
    this.onDeath = undefined;
    if (!this.hasExited) await this.worker.terminate();
    await this.exited;
  }
}

function removeIdle(thread: InlineThread): void {
  const index = idle.indexOf(thread);
  if (index >= 0) idle.splice(index, 1);
}

/** Calls `run` after `ms` (longer than a Node timer allows, too); returns the cancel. */
function later(ms: number, run: () => void): () => void {
  let timer: NodeJS.Timeout;
  const arm = (left: number): void => {
    timer = setTimeout(
      () => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : run()),
      Math.min(left, MAX_TIMER_MS),
    );
  };
  arm(ms);
  return () => clearTimeout(timer);
}

function toOutcome(
  message: Exclude<ThreadMessage, { type: 'ready' } | { type: 'started' }>,
): InlineOutcome {
  switch (message.type) {
    case 'returned':
      return { kind: 'returned', value: superjson.parse(message.encoded) };
    case 'threw':
      return { kind: 'threw', thrown: rebuild(message.thrown) };
    case 'unserializable':
      return { kind: 'unserializable', problem: message.problem };
    case 'too-large':
      return { kind: 'too-large', bytes: message.bytes };
  }
}

function rebuild(report: ThrownReport): unknown {
  switch (report.kind) {
    case 'error': {
      const error = new Error(report.message) as Error & { code?: string };
      Object.defineProperty(error, 'name', {
        value: report.name,
        enumerable: false,
        configurable: true,
        writable: true,
      });
      if (report.stack !== undefined) error.stack = report.stack;
      if (report.code !== undefined) error.code = report.code;
      return error;
    }
    case 'value':
      return superjson.parse(report.encoded);
    case 'text':
      return report.text;
  }
}

/**
 * The thread: the compiled module next to this one; from the TypeScript source (tests, tsx), a
 * bootstrap that registers tsx's loader in the thread first (a worker does not inherit it).
 */
function startWorker(): Worker {
  const options = { execArgv: [] };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./inline-thread.js', import.meta.url), options);
  // tsx/esm/api's ESM build (`tsx/esm` registers on the main thread only; a require() of the API resolves to its CJS build).
  const tsxApi = pathToFileURL(
    join(
      dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
      'dist',
      'esm',
      'api',
      'index.mjs',
    ),
  ).href;
  const entry = new URL('./inline-thread.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
