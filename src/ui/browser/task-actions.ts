/**
 * The task panel's actions and the words for how a task's tries went: "Rerun from here" (a new
 * run of the plan's spec from this task, `snapshots.rerun` with its key: it and its downstream run
 * again, the rest reuse their results), and whether a failed task is over for good or will be tried
 * again (src/store/failure-policy.ts decides).
 */
import type { UiTaskDetail } from '../ui-wire.js';
import { actionAccess, postAction, type ActionAccess } from './api.js';
import { h, planTaskHref, when } from './dom.js';

/** The sentence for a task that failed for good: after how many tries, and why no other follows. */
export function failedForGoodText(
  failure: NonNullable<UiTaskDetail['failure']>,
  maxAttempts: number | undefined,
): string {
  const tries = `${failure.attempts} ${failure.attempts === 1 ? 'try' : 'tries'}`;
  // A permanent error ends the task whatever tries are left; otherwise the last allowed one failed.
  const permanent =
    failure.type === 'PermanentError' ||
    (maxAttempts !== undefined && failure.attempts < maxAttempts);
  if (permanent) return `Failed for good after ${tries} (permanent error: another try cannot help)`;
  if (maxAttempts !== undefined)
    return `Failed for good after ${tries} (no tries left: its retry policy allows ${maxAttempts})`;
  return `Failed for good after ${tries}`;
}

/** The sentence for a task that failed a try and will be tried again. */
export function willRetryText(
  attempts: NonNullable<UiTaskDetail['attempts']>,
  maxAttempts: number | undefined,
): string {
  const next = when(attempts.nextTryAt) ?? '?';
  const of = maxAttempts === undefined ? '' : ` of ${maxAttempts} allowed`;
  return `Will retry at ${next} (${attempts.failures} failed ${attempts.failures === 1 ? 'try' : 'tries'}${of})`;
}

/**
 * "Rerun from here" for one task, kept across the panel's re-renders (its outcome with it). Only a
 * task with a key can be rerun from: a rerun names its starting task by its key.
 */
export class RerunControl {
  readonly element = h('div', undefined, 'task-actions');
  private readonly button = h('button', 'Rerun from here');
  private readonly note = h('span', undefined, 'action-note');
  private busy = false;
  /** What `/api/actions` said, read once per selected task (when it has a key). */
  private access: Promise<ActionAccess> | undefined;

  constructor(readonly task: string) {
    this.element.id = 'task-actions';
    this.button.id = 'action-rerun';
    this.button.type = 'button';
    this.button.disabled = true;
    this.button.title =
      'A new plan from this plan’s spec: this task and everything downstream run again, the other tasks reuse their results.';
    this.note.id = 'rerun-note';
    this.element.appendChild(this.button);
    this.element.appendChild(this.note);
    this.button.addEventListener('click', () => void this.rerun());
  }

  /** Shows the button for the task as it stands: usable for a task with a key, where the view takes actions. */
  update(detail: UiTaskDetail): void {
    if (detail.gone || detail.key === undefined) {
      this.button.disabled = true;
      if (!this.note.dataset['outcome'])
        this.note.textContent = detail.gone
          ? ''
          : 'Rerun needs a task key (plans from a spec, a schedule, an import or a rerun have them).';
      return;
    }
    this.access ??= knownAccess();
    void this.access.then((access) => {
      this.button.disabled = this.busy || !access.usable;
      if (!access.usable && !this.note.dataset['outcome']) this.note.textContent = access.why ?? '';
    });
  }

  private async rerun(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.button.disabled = true;
    try {
      this.access ??= knownAccess();
      const answer = await postAction('rerun', { path: this.task }, (await this.access).token);
      const plan = String(answer['plan']);
      this.note.dataset['outcome'] = 'ok';
      this.note.textContent = `Rerun from ${String(answer['from'])}: `;
      const link = h('a', plan.slice(plan.lastIndexOf('/') + 1));
      link.id = 'rerun-plan';
      link.href = planTaskHref(plan);
      this.note.appendChild(link);
    } catch (error) {
      this.note.dataset['outcome'] = 'error';
      this.note.textContent = `Rerun failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
      this.button.disabled = false;
    }
  }
}

/** What `/api/actions` says; a failed read is an answer too: no actions, and why. */
function knownAccess(): Promise<ActionAccess> {
  return actionAccess().catch((error: unknown) => ({
    usable: false,
    why: `Could not tell whether actions are on: ${error instanceof Error ? error.message : String(error)}`,
  }));
}
