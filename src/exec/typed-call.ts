/**
 * A registered function's schemas applied at run time (src/exec/standard-schema.ts): params and
 * inputs before the function runs, the result before it is stored and handed on. Each value is
 * replaced by what its schema outputs (a schema may coerce or transform).
 */
import { SchemaMismatchError, TaskExecutionError } from '../errors/task-errors.js';
import { onAbort } from '../util/abort-signals.js';
import { validateWith, type FunctionSchemas, type StandardSchemaV1 } from './standard-schema.js';

/** The params and inputs as the function is to get them; throws SchemaMismatchError naming the first that does not match. */
export async function checkCall(
  task: string,
  fn: string,
  schemas: FunctionSchemas,
  params: readonly unknown[],
  inputs: readonly unknown[],
  signal: AbortSignal,
): Promise<{ params: unknown[]; inputs: unknown[] }> {
  return {
    params:
      schemas.params === undefined
        ? [...params]
        : await checkList(task, fn, 'param', schemas.params, params, signal),
    inputs:
      schemas.inputs === undefined
        ? [...inputs]
        : await checkList(task, fn, 'input', schemas.inputs, inputs, signal),
  };
}

/** The result as stored; throws SchemaMismatchError when it does not match. */
export async function checkResult(
  task: string,
  fn: string,
  schemas: FunctionSchemas,
  value: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  return schemas.result === undefined
    ? value
    : await checkOne(task, fn, 'result', schemas.result, value, signal);
}

/** In order, so that the first value that does not match is the one reported. */
async function checkList(
  task: string,
  fn: string,
  kind: 'param' | 'input',
  schemas: readonly StandardSchemaV1[],
  values: readonly unknown[],
  signal: AbortSignal,
): Promise<unknown[]> {
  if (values.length !== schemas.length)
    throw new SchemaMismatchError(
      task,
      fn,
      `${kind}s`,
      `expected ${schemas.length} ${kind}(s), got ${values.length}`,
    );
  const checked: unknown[] = [];
  for (const [index, value] of values.entries())
    checked.push(
      await checkOne(
        task,
        fn,
        `${kind} ${index + 1}`,
        schemas[index] as StandardSchemaV1,
        value,
        signal,
      ),
    );
  return checked;
}

async function checkOne(
  task: string,
  fn: string,
  edge: string,
  schema: StandardSchemaV1,
  value: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  let checked: Awaited<ReturnType<typeof validateWith>>;
  let detach = (): void => undefined;
  try {
    // A schema cannot see the task's signal: a stop, a pause with abortRunning or a timeout does not wait for it.
    const aborted = new Promise<never>((_resolve, reject) => {
      detach = onAbort(signal, () => reject(signal.reason as Error));
    });
    checked = await Promise.race([validateWith(schema, value), aborted]);
  } catch (error) {
    if (signal.aborted) throw error;
    // A schema that throws is a fault of the user's code, like a function that throws: charged, and tried again.
    throw new TaskExecutionError(
      task,
      `the schema of its ${edge} ('${fn}') threw: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  } finally {
    detach();
  }
  if ('problem' in checked) throw new SchemaMismatchError(task, fn, edge, checked.problem);
  return checked.value;
}
