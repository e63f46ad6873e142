/**
 * Which candidate a loop takes: the highest effective priority first (a task's own, else its
 * plan's), at random among equals so that idle workers of several processes do not all race for
 * the same task.
 */

/** The items of highest priority, one picked at random; undefined when there are none. */
export function pickHighest<T>(
  items: Iterable<T>,
  priorityOf: (item: T) => number,
  random: () => number,
): T | undefined {
  let best = Number.NEGATIVE_INFINITY;
  let top: T[] = [];
  for (const item of items) {
    const priority = priorityOf(item);
    if (priority > best) {
      best = priority;
      top = [item];
    } else if (priority === best) {
      top.push(item);
    }
  }
  return top.length === 0 ? undefined : top[Math.floor(random() * top.length)];
}

/** What a loop knows of a plan whose runnable index changed but is not listed yet. */
export interface UnlistedPlan {
  /** The plan's own priority. */
  readonly priority: number;
  /** Some of its tasks have a priority of their own (unknown until listed). */
  readonly taskPriorities: boolean;
}

/**
 * True when a changed index not yet listed may hold a task that outranks `best`, the highest
 * priority among the candidates at hand: then the loop lists it before it picks, so a higher
 * task is never passed over for one it already knows. `best` is undefined when it knows none.
 */
export function mayOutrank(unlisted: UnlistedPlan, best: number | undefined): boolean {
  if (best === undefined) return true;
  return unlisted.taskPriorities || unlisted.priority > best;
}
