/**
 * Per-call cost of an inline task's function, without ZooKeeper: `executeFunction` on a trivial
 * inline function, N times one after another (one loop) and N spread over 8 concurrent callers
 * (8 loops). `npx tsx bench/inline-calls.ts [N]`. From the source, each sandbox thread loads
 * TypeScript through tsx and takes longer to start than from dist/; a run is timed only after a
 * warm-up, so the per-call figures hold for both.
 */
import { rootContainer } from '../src/di/container.js';
import { executeFunction, type ExecutionSettings } from '../src/exec/execute-function.js';
import { FunctionRegistry } from '../src/exec/function-registry.js';
import { SILENT_LOGGER } from '../src/logs/task-log-types.js';

const N = Number(process.argv[2] ?? '1000');
const settings: ExecutionSettings = {
  functions: new FunctionRegistry(),
  allowInline: true,
  inlineTimeoutMs: 5_000,
  allowShell: false,
  shellKillGraceMs: 5_000,
  maxResultBytes: 16 * 1024 * 1024,
};
const ctx = {
  container: rootContainer,
  task: '/plans/plan-0000000001/task-0000000001',
  plan: '/plans/plan-0000000001',
  workerId: 'bench',
  signal: new AbortController().signal,
  log: SILENT_LOGGER,
  attempt: 1,
  // These functions never spawn nor hand over: a call would be a bug in the test.
  spawn: () => Promise.reject(new Error('ctx.spawn is not part of this test')),
  continueWith: () => {
    throw new Error('ctx.continueWith is not part of this test');
  },
  notYet: () => {
    throw new Error('ctx.notYet is not part of this test');
  },
};
const definition = { source: '(ctx, a, b) => ({ sum: a + b, task: ctx.task })' };

async function calls(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = (await executeFunction(definition, ctx, [i, 1], settings)) as { sum: number };
    if (result.sum !== i + 1) throw new Error(`wrong result ${JSON.stringify(result)}`);
  }
}

await Promise.all(Array.from({ length: 8 }, () => calls(5))); // warm-up: the 8 threads the concurrent part uses, JIT
let started = performance.now();
await calls(N);
const serialMs = performance.now() - started;
started = performance.now();
await Promise.all(Array.from({ length: 8 }, () => calls(N / 8)));
const concurrentMs = performance.now() - started;
console.log(
  `${N} trivial inline calls: one after another ${serialMs.toFixed(0)} ms (${((serialMs * 1000) / N).toFixed(0)} µs/call); 8 at a time ${concurrentMs.toFixed(0)} ms (${((concurrentMs * 1000) / N).toFixed(0)} µs/call)`,
);
