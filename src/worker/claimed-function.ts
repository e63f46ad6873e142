/**
 * The function a claimed task runs, as events name it (`task:completed`, `task:failed`: metrics
 * label their series by it). Anyone who can write a task node chooses its function's name, so a
 * name is given only for functions this worker registers (and `inline` for inline source): the
 * names metrics see are bounded by the registry, whatever the plans hold.
 */
import type { FunctionRegistry } from '../exec/function-registry.js';
import { PrefetchError, type Claim } from '../store/task-store.js';

/** The registered function (or `inline`) of the claimed task, from the definition read with the claim; undefined when it is none of those or was not read. */
export async function claimedFunction(claim: Claim, functions: Pick<FunctionRegistry, 'has'>): Promise<string | undefined> {
  const prefetched = await claim.prefetched?.catch(() => undefined);
  const definition = prefetched?.[1];
  if (definition === undefined || definition instanceof PrefetchError) return undefined;
  if (!('fn' in definition)) return 'inline';
  return functions.has(definition.fn) ? definition.fn : undefined;
}
