import { spawnSync } from 'node:child_process';
import { extname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { FunctionRegistry } from '../exec/function-registry.js';
import type { TaskContext } from '../exec/task-context.js';
import type { JobFunction } from '../jobs/job-context.js';

type AnyFunction = (ctx: TaskContext<unknown[]>, ...inputs: unknown[]) => unknown;

/**
 * Loads the task functions a worker process runs from a module: its `functions` or default
 * export is either a FunctionRegistry (task functions and, with `registerJob`, job functions) or a
 * plain object whose function-valued entries are registered under their keys
 * (`export default { add(ctx, ...xs) { … } }`); a `jobs` export's entries are registered as job functions.
 */
export async function loadFunctions(modulePath: string): Promise<FunctionRegistry> {
  const file = resolve(modulePath);
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (cause) {
    throw new InvalidArgumentError(
      '--functions',
      `cannot load ${modulePath}: ${describeLoadError(file, cause)}`,
    );
  }
  const exported = module['functions'] ?? module['default'];
  if (isRegistry(exported)) return ownRegistry(exported);
  const jobs = module['jobs'];
  if (
    (typeof exported === 'object' && exported !== null) ||
    (typeof jobs === 'object' && jobs !== null)
  ) {
    const registry = new FunctionRegistry();
    for (const [name, value] of Object.entries(exported ?? {})) {
      if (typeof value === 'function') registry.register(name, value as AnyFunction);
    }
    for (const [name, value] of Object.entries(jobs ?? {})) {
      if (typeof value === 'function') registry.registerJob(name, value as JobFunction);
    }
    if (registry.size > 0 || registry.jobNames().length > 0) return registry;
  }
  throw new InvalidArgumentError(
    '--functions',
    `${modulePath} must export \`functions\` (or a default export): a FunctionRegistry, or an object of functions such as { add(ctx, ...inputs) { … } }`,
  );
}

/** TypeScript modules are compiled on the fly (by tsx, as the tests and examples run); the rest Node imports itself. */
const TYPESCRIPT_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!TYPESCRIPT_EXTENSIONS.has(extname(file)))
    return (await import(url)) as Record<string, unknown>;
  const { tsImport } = await import('tsx/esm/api');
  const module = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  // A .ts file outside an ESM package is compiled to CommonJS: its exports arrive as the default
  // export ({ default, functions, jobs }); take them as the module's own.
  const wrapped = module['default'];
  const isCommonJsExports =
    typeof wrapped === 'object' &&
    wrapped !== null &&
    !isRegistry(wrapped) &&
    ['default', 'functions', 'jobs'].some(
      (name) => typeof (wrapped as Record<string, unknown>)[name] === 'object',
    );
  return isCommonJsExports ? (wrapped as Record<string, unknown>) : module;
}

/**
 * What went wrong, with file:line:column where it can be told. Node's SyntaxError for an ES module
 * names no place, so the file is checked again with `node --check`, which prints it; tsx's names
 * it in its message; an error thrown while the module runs has it in its stack.
 */
function describeLoadError(file: string, cause: unknown): string {
  const error = cause instanceof Error ? cause : new Error(String(cause));
  if (error.name === 'TransformError') {
    // esbuild's columns count from 0; editors and Node's own messages count from 1.
    return error.message
      .replace(/^Transform failed with \d+ errors?:\n/, '')
      .replace(
        /^(.+?):(\d+):(\d+): /gm,
        (_match, where: string, line: string, column: string) =>
          `${where}:${line}:${Number(column) + 1}: `,
      )
      .trim();
  }
  if (error.name === 'SyntaxError' && !TYPESCRIPT_EXTENSIONS.has(extname(file))) {
    const location = syntaxErrorLocation(file);
    if (location !== undefined) return `${location}: ${error.message}`;
  }
  const url = pathToFileURL(file).href;
  const frame = (error.stack ?? '')
    .split('\n')
    .find((line) => line.includes(url) || line.includes(file));
  const place =
    frame === undefined ? undefined : /(file:\/\/[^\s()]+?|\/[^\s()]+?):(\d+):(\d+)/.exec(frame);
  if (place === undefined || place === null) return error.message;
  const [, where, line, column] = place;
  const path = where?.startsWith('file:') ? fileURLToPath(where) : where;
  return `${error.message} (at ${path}:${line}:${column})`;
}

/** `file:line:column` of the file's own syntax error, from `node --check` (undefined when the file itself parses). */
function syntaxErrorLocation(file: string): string | undefined {
  const check = spawnSync(process.execPath, ['--check', file], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  const lines = (check.stderr ?? '').split('\n');
  const line = /:(\d+)$/.exec(lines[0] ?? '')?.[1];
  if (check.status === 0 || line === undefined) return undefined;
  const caret = lines[2]?.indexOf('^') ?? -1;
  return `${file}:${line}${caret >= 0 ? `:${caret + 1}` : ''}`;
}

/**
 * The registry as this copy of zk-plan's FunctionRegistry: one built with another copy (a module
 * that imports zk-plan from elsewhere, or one tsx loaded apart) is copied entry by entry, schemas
 * and job functions included, since ZkPlan.connect takes only its own class.
 */
function ownRegistry(registry: FunctionRegistry): FunctionRegistry {
  if (registry instanceof FunctionRegistry) return registry;
  const other: Partial<FunctionRegistry> & Pick<FunctionRegistry, 'names' | 'get'> = registry;
  const own = new FunctionRegistry();
  for (const name of other.names()) {
    const fn = other.get(name);
    if (fn !== undefined) own.register(name, fn, other.schemasOf?.(name));
  }
  for (const name of other.jobNames?.() ?? []) {
    const job = other.jobFunction?.(name);
    if (job !== undefined) own.registerJob(name, job);
  }
  return own;
}

/** Duck-typed, so a registry built with another copy of zk-plan is accepted too. */
function isRegistry(value: unknown): value is FunctionRegistry {
  return (
    value instanceof FunctionRegistry ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as FunctionRegistry).get === 'function' &&
      typeof (value as FunctionRegistry).names === 'function')
  );
}
