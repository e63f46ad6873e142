/**
 * A registered function's schemas applied at run time (src/exec/standard-schema.ts): params and
 * inputs before the function runs, the result before it is stored and handed on. Each value is
 * replaced by what its schema outputs (a schema may coerce or transform).
 */
import { SchemaMismatchError, TaskExecutionError } from '../errors/task-errors.js';
import { validateWith, type FunctionSchemas, type StandardSchemaV1 } from './standard-schema.js';

/** The params and inputs as the function is to get them; throws SchemaMismatchError naming the first that does not match. */
export async function checkCall(
  task: string,
  fn: string,
  schemas: FunctionSchemas,
  params: readonly unknown[],
  inputs: readonly unknown[],
): Promise<{ params: unknown[]; inputs: unknown[] }> {
  return {
    params: schemas.params === undefined ? [...params] : await checkList(task, fn, 'param', schemas.params, params),
    inputs: schemas.inputs === undefined ? [...inputs] : await checkList(task, fn, 'input', schemas.inputs, inputs),
  };
}

/** The result as stored; throws SchemaMismatchError when it does not match. */
export async function checkResult(task: string, fn: string, schemas: FunctionSchemas, value: unknown): Promise<unknown> {
  return schemas.result === undefined ? value : await checkOne(task, fn, 'result', schemas.result, value);
}

async function checkList(
  task: string,
  fn: string,
  kind: 'param' | 'input',
  schemas: readonly StandardSchemaV1[],
  values: readonly unknown[],
): Promise<unknown[]> {
  if (values.length !== schemas.length) throw new SchemaMismatchError(task, fn, `${kind}s`, `expected ${schemas.length} ${kind}(s), got ${values.length}`);
  return await Promise.all(values.map((value, index) => checkOne(task, fn, `${kind} ${index + 1}`, schemas[index] as StandardSchemaV1, value)));
}

async function checkOne(task: string, fn: string, edge: string, schema: StandardSchemaV1, value: unknown): Promise<unknown> {
  let checked: Awaited<ReturnType<typeof validateWith>>;
  try {
    checked = await validateWith(schema, value);
  } catch (error) {
    // A schema that throws is a fault of the user's code, like a function that throws: charged, and tried again.
    throw new TaskExecutionError(task, `the schema of its ${edge} ('${fn}') threw: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if ('problem' in checked) throw new SchemaMismatchError(task, fn, edge, checked.problem);
  return checked.value;
}
