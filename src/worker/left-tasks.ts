/** How long a pool leaves alone a task it cannot run before it looks at it again (a worker that could may have gone meanwhile). */
const LEAVE_FOR_MS = 10 * 60_000;

/**
 * Tasks a worker pool leaves to other workers because it cannot run them (a shell task, on a
 * pool without allowShell): none of its loops claims them again for LEAVE_FOR_MS. Entries go once
 * that time is over, so the map holds only tasks seen in the last LEAVE_FOR_MS.
 */
export class LeftTasks {
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  leave(task: string): void {
    const now = this.now();
    for (const [left, until] of this.until) if (until <= now) this.until.delete(left);
    this.until.set(task, now + LEAVE_FOR_MS);
  }

  isLeft(task: string): boolean {
    const until = this.until.get(task);
    return until !== undefined && until > this.now();
  }

  /** Tasks remembered, for leak checks. */
  get size(): number {
    return this.until.size;
  }
}
