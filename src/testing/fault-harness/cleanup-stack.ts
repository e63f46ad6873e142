/**
 * The clean-up of whatever a fault run (the harness's, or a fault test's) started: steps run in
 * reverse order of registration, each even when an earlier one failed, then a check that no process
 * it watched is still alive.
 */
import { isProcessAlive } from './worker-process.js';

/** Clean-up steps run in reverse order of registration, each even when an earlier one failed. */
export class CleanupStack {
  private readonly steps: { what: string; run: () => unknown }[] = [];
  private readonly pids = new Set<number>();

  /** Registers a step; `what` names it in the error when it fails. */
  add(what: string, run: () => unknown): void {
    this.steps.push({ what, run });
  }

  /** A process that must be gone once the clean-up ran (a server JVM or a worker). */
  watchPid(pid: number | undefined): void {
    if (pid !== undefined) this.pids.add(pid);
  }

  /** Runs every step, then checks that no watched process is alive; throws what went wrong. */
  async run(): Promise<void> {
    const failures: string[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (error) {
        failures.push(`${step.what}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const leftBehind = [...this.pids].filter(isProcessAlive);
    this.pids.clear();
    if (leftBehind.length > 0) failures.push(`processes left behind: ${leftBehind.join(', ')}`);
    if (failures.length > 0) throw new Error(`clean-up failed:\n${failures.join('\n')}`);
  }
}
