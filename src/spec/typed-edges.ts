/**
 * What a spec's typed edges allow to be checked before anything is written, from the schemas its
 * functions were registered with (src/exec/standard-schema.ts): the number of params and inputs
 * (arity), each param's value (they are known at submit), and, where both ends expose Standard
 * JSON Schema (zod does; valibot does not), that a producer's result type is one its consumer's
 * input accepts. Everything else is checked by the workers at run time.
 */
import { PlanSpecError } from '../errors/spec-errors.js';
import {
  inputJsonType,
  outputJsonType,
  validateWith,
  type FunctionSchemas,
  type StandardSchemaV1,
} from '../exec/standard-schema.js';

/** A spec task as checked so far. */
interface CheckedEntry {
  readonly fn: string;
  readonly params: readonly unknown[];
  readonly inputs: readonly string[];
}

export type SchemasOf = (fn: string) => FunctionSchemas | undefined;

/** How long one schema may take to validate a value at submit. */
const VALIDATE_TIMEOUT_MS = 5_000;

/** Arity (pure); throws PlanSpecError naming the task. */
export function checkArity(entries: ReadonlyMap<string, CheckedEntry>, schemasOf: SchemasOf): void {
  for (const [key, entry] of entries) {
    const schemas = schemasOf(entry.fn);
    if (schemas?.params !== undefined && schemas.params.length !== entry.params.length)
      throw new PlanSpecError(
        'SPEC_ARITY',
        key,
        `function "${entry.fn}" takes ${schemas.params.length} param(s) (its schemas), got ${entry.params.length}`,
      );
    if (schemas?.inputs !== undefined && schemas.inputs.length !== entry.inputs.length)
      throw new PlanSpecError(
        'SPEC_ARITY',
        key,
        `function "${entry.fn}" takes ${schemas.inputs.length} input(s) (its schemas), got ${entry.inputs.length}`,
      );
  }
}

/**
 * Each param against its schema (they are known at submit), then each edge whose ends both expose
 * JSON Schema: when the producer's result type differs from the type the consumer's input
 * declares, a few plain values of the producer's type are offered to the consumer's schema, and
 * the edge is refused only when it takes none of them (so a coercing input, `z.coerce.number()`
 * fed a string, passes). Throws PlanSpecError naming the task.
 */
export async function checkSpecValues(
  entries: ReadonlyMap<string, CheckedEntry>,
  schemasOf: SchemasOf,
): Promise<void> {
  for (const [key, entry] of entries) {
    const schemas = schemasOf(entry.fn);
    for (const [index, schema] of (schemas?.params ?? []).entries()) {
      const what = `param ${index + 1} of "${entry.fn}"`;
      const problem = await validateInTime(schema, entry.params[index]).catch((error: unknown) => {
        throw new PlanSpecError(
          'SPEC_PARAM_INVALID',
          key,
          `the schema of ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      if (problem !== undefined)
        throw new PlanSpecError('SPEC_PARAM_INVALID', key, `${what}: ${problem}`);
    }
    for (const [index, producerKey] of entry.inputs.entries()) {
      const input = schemas?.inputs?.[index];
      const producer = entries.get(producerKey);
      const result = producer === undefined ? undefined : schemasOf(producer.fn)?.result;
      if (input === undefined || result === undefined) continue;
      const given = outputJsonType(result);
      const wanted = inputJsonType(input);
      if (given === undefined || wanted === undefined || accepts(wanted, given)) continue;
      const samples = SAMPLES[given] ?? [];
      const taken = await Promise.all(
        samples.map((sample) =>
          validateInTime(input, sample).then(
            (problem) => problem === undefined,
            () => false,
          ),
        ),
      );
      if (taken.includes(true)) continue;
      throw new PlanSpecError(
        'SPEC_EDGE_TYPE',
        key,
        `input ${index + 1} comes from "${producerKey}", whose function "${producer?.fn}" returns ${given}, but "${entry.fn}" takes ${wanted} there`,
      );
    }
  }
}

/** Plain values of each JSON type, offered to a consumer's schema to see whether it takes that type at all. */
const SAMPLES: Readonly<Record<string, readonly unknown[]>> = {
  string: ['', '0', '1', 'true'],
  number: [0, 1],
  integer: [0, 1],
  boolean: [false, true],
  null: [null],
  array: [[]],
  object: [{}],
};

/** JSON Schema types: an integer is a number. */
function accepts(wanted: string, given: string): boolean {
  return wanted === given || (wanted === 'number' && given === 'integer');
}

/** Why `value` does not match, or undefined; rejects when the schema throws or does not settle within VALIDATE_TIMEOUT_MS. */
async function validateInTime(
  schema: StandardSchemaV1,
  value: unknown,
): Promise<string | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`it did not settle within ${VALIDATE_TIMEOUT_MS} ms`)),
      VALIDATE_TIMEOUT_MS,
    );
  });
  try {
    const checked = await Promise.race([validateWith(schema, value), timeout]);
    return 'problem' in checked ? checked.problem : undefined;
  } finally {
    clearTimeout(timer);
  }
}
