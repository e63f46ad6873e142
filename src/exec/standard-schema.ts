/**
 * The Standard Schema interface (https://standardschema.dev, v1), declared here so that no schema
 * library is a dependency: zod (≥ 3.24), valibot (≥ 1), arktype (≥ 2) and others implement it.
 * A library that also implements Standard JSON Schema (zod ≥ 4.2: `~standard.jsonSchema`) lets a
 * spec's edges be compared before anything runs (src/spec/typed-edges.ts).
 */
import { InvalidArgumentError } from '../errors/usage-errors.js';

/**
 * One problem a Standard Schema found in a value: its message and where in the value it is.
 *
 * @category Plans and tasks
 */
export interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/**
 * What a Standard Schema's `validate` gives: the (possibly transformed) value, or the issues found.
 *
 * @category Plans and tasks
 */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardIssue[] };

/**
 * Standard JSON Schema: the JSON Schema of a schema's input or output, for the `target` draft asked for.
 *
 * @category Plans and tasks
 */
export type JsonSchemaOf = (options: { readonly target: string }) => Record<string, unknown>;

/**
 * A schema of any library that implements Standard Schema v1 (zod, valibot, arktype…), as
 * `FunctionRegistry.register` takes it to check a function's params, inputs and result.
 *
 * @category Plans and tasks
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    /** Checks a value: its (possibly transformed) value, or the issues found. */
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** Standard JSON Schema, where the library offers it. */
    readonly jsonSchema?:
      { readonly input?: JsonSchemaOf; readonly output?: JsonSchemaOf } | undefined;
  };
}

/**
 * Schemas a function is registered with (`FunctionRegistry.register(name, fn, schemas)`).
 *
 * @category Plans and tasks
 */
export interface FunctionSchemas {
  /** One per param, in order: a task must have exactly this many params, each valid. */
  readonly params?: readonly StandardSchemaV1[];
  /** One per input, in argument order: a task must have exactly this many inputs, each valid. */
  readonly inputs?: readonly StandardSchemaV1[];
  /** What the function returns: checked before the result is stored and handed on. */
  readonly result?: StandardSchemaV1;
}

function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const standard = (value as { '~standard'?: { version?: unknown; validate?: unknown } })[
    '~standard'
  ];
  return (
    typeof standard === 'object' &&
    standard !== null &&
    standard.version === 1 &&
    typeof standard.validate === 'function'
  );
}

/** Checks the shape of `schemas` (what register accepts); throws InvalidArgumentError naming the function. */
export function assertFunctionSchemas(
  name: string,
  schemas: unknown,
): asserts schemas is FunctionSchemas {
  if (typeof schemas !== 'object' || schemas === null || Array.isArray(schemas))
    throw new InvalidArgumentError(
      'schemas',
      `function '${name}': expected { params?, inputs?, result? } of Standard Schemas (zod, valibot, arktype…)`,
    );
  for (const [field, value] of Object.entries(schemas)) {
    if (field === 'result') {
      if (!isStandardSchema(value))
        throw new InvalidArgumentError(
          'schemas.result',
          `function '${name}': expected a Standard Schema`,
        );
    } else if (field === 'params' || field === 'inputs') {
      if (!Array.isArray(value) || !value.every(isStandardSchema))
        throw new InvalidArgumentError(
          `schemas.${field}`,
          `function '${name}': expected an array of Standard Schemas, one per ${field.slice(0, -1)}`,
        );
    } else {
      throw new InvalidArgumentError(
        'schemas',
        `function '${name}': unknown field "${field}" (params, inputs, result)`,
      );
    }
  }
}

/** Validates `value`; the schema's output (it may transform) or the issues as one line. */
export async function validateWith(
  schema: StandardSchemaV1,
  value: unknown,
): Promise<{ readonly value: unknown } | { readonly problem: string }> {
  const result = await schema['~standard'].validate(value);
  if (result.issues === undefined) return { value: result.value };
  return { problem: result.issues.map(describeIssue).join('; ') };
}

function describeIssue(issue: StandardIssue): string {
  const path = (issue.path ?? [])
    .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
    .join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}

/** The JSON Schema `type` of what the schema outputs, where its library exposes Standard JSON Schema; undefined otherwise. */
export function outputJsonType(schema: StandardSchemaV1): string | undefined {
  return jsonType(schema, 'output');
}

/** The JSON Schema `type` the schema accepts, where exposed. */
export function inputJsonType(schema: StandardSchemaV1): string | undefined {
  return jsonType(schema, 'input');
}

function jsonType(schema: StandardSchemaV1, side: 'input' | 'output'): string | undefined {
  const make = schema['~standard'].jsonSchema?.[side];
  if (make === undefined) return undefined;
  try {
    const type = make({ target: 'draft-2020-12' })['type'];
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined; // a schema with no JSON Schema form (a transform, a custom check)
  }
}
