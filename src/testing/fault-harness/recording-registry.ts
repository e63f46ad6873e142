/**
 * The user's functions, wrapped so that every execution appends its records to the harness's
 * execution log (execution-record.ts): `start` before the function runs, the effects it declares,
 * `end` when it returns or throws. The function itself, its schemas and the job functions are kept
 * as they are.
 */
import { FunctionRegistry, type RegisteredFunction } from '../../exec/function-registry.js';
import type { TaskContext } from '../../exec/task-context.js';
import { withEffectSink } from './effects.js';
import { previewOf, valueHash, type ExecutionRecord } from './execution-record.js';

type AnyFunction = (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => unknown;

/** A registry with every function of `user` wrapped to `append` its execution records. */
export function recordingRegistry(
  user: FunctionRegistry,
  append: (record: ExecutionRecord) => void,
): FunctionRegistry {
  const registry = new FunctionRegistry();
  let serial = 0;
  const nextRun = (): string => `${process.pid}:${++serial}`;
  for (const name of user.names()) {
    const fn = user.get(name) as RegisteredFunction;
    registry.register(
      name,
      recording(name, fn as unknown as AnyFunction, append, nextRun),
      user.schemasOf(name),
    );
  }
  for (const name of user.jobNames()) {
    const job = user.jobFunction(name);
    if (job !== undefined) registry.registerJob(name, job);
  }
  return registry;
}

function recording(
  fn: string,
  body: AnyFunction,
  append: (record: ExecutionRecord) => void,
  nextRun: () => string,
): AnyFunction {
  return async (ctx, ...inputs) => {
    const run = nextRun();
    append({
      kind: 'start',
      run,
      at: Date.now(),
      plan: ctx.plan,
      task: ctx.task,
      fn,
      attempt: ctx.attempt,
      pid: process.pid,
      workerId: ctx.workerId,
      inputsHash: safeHash({ params: ctx.params, inputs }),
    });
    const sink = {
      effect: (name: string, value: unknown): void =>
        append({
          kind: 'effect',
          run,
          at: Date.now(),
          name,
          valueHash: safeHash(value),
          preview: previewOf(value),
        }),
    };
    try {
      const result = await withEffectSink(sink, () => body(ctx, ...inputs));
      append({
        kind: 'end',
        run,
        at: Date.now(),
        outcome: 'returned',
        aborted: ctx.signal.aborted,
        resultHash: safeHash(result),
        preview: previewOf(result),
      });
      return result;
    } catch (error) {
      append({
        kind: 'end',
        run,
        at: Date.now(),
        outcome: 'threw',
        aborted: ctx.signal.aborted,
        error: previewOf(error instanceof Error ? `${error.name}: ${error.message}` : error),
      });
      throw error;
    }
  };
}

/** The value's hash; for a value superjson cannot serialise (a cycle, say), the hash of its preview. */
function safeHash(value: unknown): string {
  try {
    return valueHash(value);
  } catch {
    return valueHash(`unserialisable: ${previewOf(value)}`);
  }
}
