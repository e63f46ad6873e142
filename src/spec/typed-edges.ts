/**
 * What a spec's typed edges allow to be checked before anything is written, from the schemas its
 * functions were registered with (src/exec/standard-schema.ts): the number of params and inputs
 * (arity), each param's value (they are known at submit), and, where both ends expose Standard
 * JSON Schema (zod does; valibot does not), that a producer's result type is one its consumer's
 * input accepts. Everything else is checked by the workers at run time.
 */
import { PlanSpecError } from '../errors/spec-errors.js';
import { inputJsonType, outputJsonType, validateWith, type FunctionSchemas, type StandardSchemaV1 } from '../exec/standard-schema.js';

/** A spec task as checked so far. */
interface CheckedEntry {
  readonly fn: string;
  readonly params: readonly unknown[];
  readonly inputs: readonly string[];
}

export type SchemasOf = (fn: string) => FunctionSchemas | undefined;

/** Arity and edge types (pure); throws PlanSpecError naming the task. */
export function checkTypedEdges(entries: ReadonlyMap<string, CheckedEntry>, schemasOf: SchemasOf): void {
  for (const [key, entry] of entries) {
    const schemas = schemasOf(entry.fn);
    if (schemas === undefined) continue;
    if (schemas.params !== undefined && schemas.params.length !== entry.params.length)
      throw new PlanSpecError('SPEC_ARITY', key, `function "${entry.fn}" takes ${schemas.params.length} param(s) (its schemas), got ${entry.params.length}`);
    if (schemas.inputs === undefined) continue;
    if (schemas.inputs.length !== entry.inputs.length)
      throw new PlanSpecError('SPEC_ARITY', key, `function "${entry.fn}" takes ${schemas.inputs.length} input(s) (its schemas), got ${entry.inputs.length}`);
    entry.inputs.forEach((producerKey, index) => {
      const producer = entries.get(producerKey);
      const result = producer === undefined ? undefined : schemasOf(producer.fn)?.result;
      if (result === undefined) return;
      const given = outputJsonType(result);
      const wanted = inputJsonType(schemas.inputs?.[index] as StandardSchemaV1);
      if (given === undefined || wanted === undefined || accepts(wanted, given)) return;
      throw new PlanSpecError(
        'SPEC_EDGE_TYPE',
        key,
        `input ${index + 1} comes from "${producerKey}", whose function "${producer?.fn}" returns ${given}, but "${entry.fn}" takes ${wanted} there`,
      );
    });
  }
}

/** JSON Schema types: an integer is a number. */
function accepts(wanted: string, given: string): boolean {
  return wanted === given || (wanted === 'number' && given === 'integer');
}

/** Each param against its schema (they are known at submit); throws PlanSpecError SPEC_PARAM_INVALID naming the task and the param. */
export async function checkSpecParams(entries: ReadonlyMap<string, CheckedEntry>, schemasOf: SchemasOf): Promise<void> {
  for (const [key, entry] of entries) {
    const params = schemasOf(entry.fn)?.params;
    if (params === undefined) continue;
    for (const [index, schema] of params.entries()) {
      const checked = await validateWith(schema, entry.params[index]);
      if ('problem' in checked) throw new PlanSpecError('SPEC_PARAM_INVALID', key, `param ${index + 1} of "${entry.fn}": ${checked.problem}`);
    }
  }
}
