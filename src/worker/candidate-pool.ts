import { parentOf } from '../zk/layout.js';

/** Where a candidate came from: a listing of its plan's runnable index, or this process itself. */
export type CandidateSource = 'index' | 'offered';

interface Candidate {
  readonly task: string;
  source: CandidateSource;
  /** When it was added, in the pool's own count: a listing sent later saw its index entry if it had one. */
  addedAt: number;
}

/** Random draws a pick makes before it looks at every candidate (most draws hit a usable one). */
const RANDOM_DRAWS = 8;

/**
 * The tasks one worker process may claim next (pure, no I/O). A pick costs the same with ten
 * candidates or a hundred thousand: candidates sit in an array and a pick draws at random, so the
 * loops of several processes spread over a big index instead of racing for its first entry.
 *
 * A listing of a plan's index tells which of its tasks are still there: candidates it brought that
 * the next listing no longer names are gone (run elsewhere, or failed for good) and are dropped, so
 * no claim is wasted on a task that no longer exists. Candidates this process offered itself (it
 * made them runnable, or their retry time came) are kept until picked: their index entry may be on
 * its way, or deliberately absent.
 */
export class CandidatePool {
  private readonly order: Candidate[] = [];
  private readonly byTask = new Map<string, number>();
  private readonly byPlan = new Map<string, Set<string>>();
  private clock = 0;

  get size(): number {
    return this.order.length;
  }

  has(task: string): boolean {
    return this.byTask.has(task);
  }

  /** The pool's count now: pass it to `reconcile` with the listing sent at this moment. */
  now(): number {
    return this.clock;
  }

  /** Adds a task; a task offered by this process stays `offered` even when a listing names it too. */
  add(task: string, source: CandidateSource): void {
    this.clock += 1;
    const at = this.byTask.get(task);
    if (at !== undefined) {
      const candidate = this.order[at] as Candidate;
      if (source === 'offered') candidate.source = 'offered';
      candidate.addedAt = this.clock;
      return;
    }
    this.byTask.set(task, this.order.length);
    this.order.push({ task, source, addedAt: this.clock });
    const plan = parentOf(task);
    let tasks = this.byPlan.get(plan);
    if (tasks === undefined) {
      tasks = new Set();
      this.byPlan.set(plan, tasks);
    }
    tasks.add(task);
  }

  /** Removes a task (swapping the last candidate into its place: O(1)). */
  delete(task: string): boolean {
    const at = this.byTask.get(task);
    if (at === undefined) return false;
    const last = this.order.pop() as Candidate;
    if (last.task !== task) {
      this.order[at] = last;
      this.byTask.set(last.task, at);
    }
    this.byTask.delete(task);
    const plan = parentOf(task);
    const tasks = this.byPlan.get(plan);
    tasks?.delete(task);
    if (tasks?.size === 0) this.byPlan.delete(plan);
    return true;
  }

  /** Where the candidate came from; undefined when it is not one. */
  sourceOf(task: string): CandidateSource | undefined {
    const at = this.byTask.get(task);
    return at === undefined ? undefined : this.order[at]?.source;
  }

  /**
   * A listing of the plan's index, sent when the pool's count was `sentAt`, names `listed`: drops
   * the candidates it brought before then that the listing no longer names.
   */
  reconcile(plan: string, listed: ReadonlySet<string>, sentAt: number): void {
    const tasks = this.byPlan.get(plan);
    if (tasks === undefined) return;
    for (const task of [...tasks]) {
      const candidate = this.order[this.byTask.get(task) as number] as Candidate;
      if (candidate.source === 'index' && candidate.addedAt <= sentAt && !listed.has(task))
        this.delete(task);
    }
  }

  /** Drops every candidate of a plan that is gone. */
  forgetPlan(plan: string): void {
    for (const task of [...(this.byPlan.get(plan) ?? [])]) this.delete(task);
  }

  /** Every candidate (for ranked picks and reads of own priorities, which only plans with priorities need). */
  all(): readonly string[] {
    return this.order.map((candidate) => candidate.task);
  }

  /**
   * A usable candidate at random: a few random draws first, then, when they all hit unusable ones
   * (few are usable), one look at every candidate. Does not remove it.
   */
  pickRandom(usable: (task: string) => boolean, random: () => number): string | undefined {
    const count = this.order.length;
    if (count === 0) return undefined;
    for (let draw = 0; draw < Math.min(RANDOM_DRAWS, count); draw++) {
      const task = (this.order[Math.floor(random() * count)] as Candidate).task;
      if (usable(task)) return task;
    }
    const all = this.order.filter((candidate) => usable(candidate.task));
    return all.length === 0
      ? undefined
      : (all[Math.floor(random() * all.length)] as Candidate).task;
  }
}
