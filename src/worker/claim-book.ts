/** How many finished tasks a process remembers, to keep stale index entries out of its candidates. */
export const RECENTLY_DONE_LIMIT = 50_000;

/**
 * A worker process's bookkeeping of the tasks its loops hold (pure, no I/O): a task is reserved
 * before its claim is sent, so no sibling loop races for it, and given up again when the claim fails
 * or the task ends; tasks finished here are remembered for a while, since an index listing sent
 * before their entry went may still name them.
 */
export class ClaimBook {
  private readonly held = new Set<string>();
  /** Insertion-ordered: the oldest entries go first when the limit is reached. */
  private readonly done = new Set<string>();

  constructor(private readonly doneLimit = RECENTLY_DONE_LIMIT) {}

  /** Reserves a task for a loop of this process; false when another loop holds it already. */
  reserve(task: string): boolean {
    if (this.held.has(task)) return false;
    this.held.add(task);
    return true;
  }

  /** Gives up a reservation or a hold; `completed`: the task is gone (done here). */
  release(task: string, completed = false): void {
    this.held.delete(task);
    if (!completed) return;
    this.done.delete(task);
    this.done.add(task);
    for (const oldest of this.done) {
      if (this.done.size <= this.doneLimit) break;
      this.done.delete(oldest);
    }
  }

  /** The task is offered again (e.g. its retry delay is over): no longer "done here". */
  reoffered(task: string): void {
    this.done.delete(task);
  }

  isHeld(task: string): boolean {
    return this.held.has(task);
  }

  /** True when a loop of this process holds the task, or finished it lately: no use claiming it. */
  isHeldOrDone(task: string): boolean {
    return this.held.has(task) || this.done.has(task);
  }

  /** Forgets every task of a plan that is gone. */
  forgetPlan(plan: string): void {
    const prefix = `${plan}/`;
    for (const task of this.done) if (task.startsWith(prefix)) this.done.delete(task);
  }

  get heldCount(): number {
    return this.held.size;
  }

  get doneCount(): number {
    return this.done.size;
  }
}
