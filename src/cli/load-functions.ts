import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
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
  const url = pathToFileURL(resolve(modulePath)).href;
  let module: Record<string, unknown>;
  try {
    module = (await import(url)) as Record<string, unknown>;
  } catch (cause) {
    throw new InvalidArgumentError('--functions', `cannot load ${modulePath}: ${(cause as Error).message}`);
  }
  const exported = module['functions'] ?? module['default'];
  if (isRegistry(exported)) return exported;
  const jobs = module['jobs'];
  if ((typeof exported === 'object' && exported !== null) || (typeof jobs === 'object' && jobs !== null)) {
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
