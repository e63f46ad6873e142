/**
 * The inside of an inline task's worker thread (started by inline-sandbox.ts): runs one job at a
 * time, each in a fresh vm2 sandbox, and posts back the result encoded as zk-plan stores it (within
 * the job's size limit), or what went wrong. The time limit is not kept here: the main thread
 * terminates this thread, whatever the code is doing, so a loop anywhere (synchronous, after an
 * `await`, in a callback) can stop only this thread, never the worker's event loop.
 */
import { parentPort } from 'node:worker_threads';
import superjson from 'superjson';
import { VM } from 'vm2';
import { UnserializableValueError, ValueTooLargeError } from '../errors/task-errors.js';
import { encodeValue } from '../serialization/codec.js';
import type { InlineJob, ThreadMessage, ThrownReport } from './inline-protocol.js';

const port = parentPort;
if (port === null)
  throw new Error('src/exec/inline-thread runs only as a worker thread (see inline-sandbox.ts)');

// A promise the inline code rejects and never handles is its own affair: it must not end the thread (Node's default).
process.on('unhandledRejection', () => undefined);

port.on('message', (job: InlineJob) => {
  port.postMessage({ type: 'started', id: job.id } satisfies ThreadMessage);
  void run(job).then((message) => port.postMessage(message));
});
port.postMessage({ type: 'ready' } satisfies ThreadMessage);

async function run(job: InlineJob): Promise<ThreadMessage> {
  const { id, ctx } = job;
  let value: unknown;
  try {
    // No require, no process, no timers, no eval, no WebAssembly; a fresh context for every run.
    const vm = new VM({
      allowAsync: true,
      eval: false,
      wasm: false,
      sandbox: {
        __zkPlanCtx: { params: [], task: ctx.task, plan: ctx.plan, workerId: ctx.workerId },
        __zkPlanArgs: superjson.parse<unknown[]>(job.args),
      },
    });
    value = await (vm.run(
      `"use strict"; (${job.source})(__zkPlanCtx, ...__zkPlanArgs)`,
    ) as unknown);
  } catch (thrown) {
    return { type: 'threw', id, thrown: report(thrown) };
  }
  try {
    // The checks and the message perform-task would give; the text crosses only within the limit.
    return {
      type: 'returned',
      id,
      encoded: encodeValue(
        value,
        `The result of task ${ctx.task}`,
        ctx.task,
        job.maxResultBytes,
      ).toString('utf8'),
    };
  } catch (error) {
    if (error instanceof UnserializableValueError)
      return { type: 'unserializable', id, problem: error.problem };
    if (error instanceof ValueTooLargeError) return { type: 'too-large', id, bytes: error.bytes };
    return { type: 'threw', id, thrown: report(error) }; // e.g. a getter of the result that throws
  }
}

/** What was thrown, in a form that crosses to the main thread (reading it may run sandbox code: a getter). */
function report(thrown: unknown): ThrownReport {
  try {
    if (thrown instanceof Error) {
      const { name, message, stack } = thrown;
      const code: unknown = (thrown as { code?: unknown }).code;
      return {
        kind: 'error',
        name: String(name),
        message: String(message),
        ...(typeof stack === 'string' ? { stack } : {}),
        ...(typeof code === 'string' ? { code } : {}),
      };
    }
    return { kind: 'value', encoded: superjson.stringify(thrown) };
  } catch {
    try {
      return { kind: 'text', text: String(thrown) };
    } catch {
      return { kind: 'text', text: 'a value with no string form' };
    }
  }
}
