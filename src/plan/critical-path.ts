/**
 * The critical path of a plan's run: the chain of tasks, each an input of the next, whose run
 * durations add up to the most. The timeline marks it (the web view, `zk-plan show --timeline`):
 * a shorter run of the plan needs one of these tasks to run faster. Pure, and free of any import,
 * so the web view's bundle takes it as it is.
 */

/** A task as the critical path sees it: its name, the names of its inputs, and how long it ran. */
export interface PathTask {
  readonly name: string;
  readonly inputs: readonly string[];
  /** Its run duration in ms (0 or less: it adds nothing). */
  readonly durationMs: number;
}

/** The longest chain: its tasks' names, first input first, and their durations' sum. */
export interface CriticalPath {
  readonly names: readonly string[];
  readonly totalMs: number;
}

/**
 * The chain through the inputs whose durations add up to the most; the empty path for no tasks.
 * Inputs that are not among `tasks` are left out; tasks on a cycle (no plan has one, but the list
 * may come from forged records) are never on the path. Of inputs as long, the one whose chain has
 * more tasks, then the one listed first, is taken; of chains as long, the one of more tasks, then
 * the one that ends last in the inputs' order.
 */
export function criticalPath(tasks: readonly PathTask[]): CriticalPath {
  const byName = new Map(tasks.map((task) => [task.name, task]));
  const dependents = new Map<string, string[]>();
  const missing = new Map<string, number>();
  for (const task of tasks) {
    const known = [...new Set(task.inputs)].filter((input) => byName.has(input));
    missing.set(task.name, known.length);
    for (const input of known) dependents.set(input, [...(dependents.get(input) ?? []), task.name]);
  }
  const longest = new Map<string, number>();
  /** Tasks in the longest chain that ends at each task: of chains as long, the one of more tasks is taken. */
  const depth = new Map<string, number>();
  const previous = new Map<string, string>();
  const ready = tasks.filter((task) => missing.get(task.name) === 0).map((task) => task.name);
  for (let index = 0; index < ready.length; index++) {
    const name = ready[index] as string;
    const task = byName.get(name) as PathTask;
    let before = 0;
    let beforeDepth = 0;
    for (const input of task.inputs) {
      const length = longest.get(input);
      const inputDepth = depth.get(input) ?? 0;
      if (
        length !== undefined &&
        (length > before || (length === before && inputDepth > beforeDepth))
      ) {
        before = length;
        beforeDepth = inputDepth;
        previous.set(name, input);
      }
    }
    longest.set(name, before + Math.max(0, finite(task.durationMs)));
    depth.set(name, beforeDepth + 1);
    for (const dependent of dependents.get(name) ?? []) {
      const left = (missing.get(dependent) ?? 0) - 1;
      missing.set(dependent, left);
      if (left === 0) ready.push(dependent);
    }
  }
  // Among chains as long, the one of more tasks, then the one that goes on furthest: a task that
  // took no time still ends it.
  let last: string | undefined;
  let totalMs = 0;
  let lastDepth = 0;
  for (const name of ready) {
    const length = longest.get(name) ?? 0;
    const chainDepth = depth.get(name) ?? 0;
    if (last === undefined || length > totalMs || (length === totalMs && chainDepth >= lastDepth)) {
      last = name;
      totalMs = length;
      lastDepth = chainDepth;
    }
  }
  const names: string[] = [];
  for (let name = last; name !== undefined; name = previous.get(name)) names.push(name);
  return { names: names.reverse(), totalMs };
}

function finite(value: number): number {
  return Number.isFinite(value) ? value : 0;
}
