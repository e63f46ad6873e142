/**
 * The plan page's pause, resume, cancel and retry buttons. Shown only when the view accepts
 * actions (the server marks the page `data-actions="true"`: `zk-plan ui --allow-actions`) and this
 * tab holds the token; each button is enabled only where the server would accept its action.
 */
import type { UiPlanStatus } from '../ui-wire.js';
import { actionToken, postAction, type PlanAction } from './api.js';
import { byId } from './dom.js';

/** A cancel button asks again for this long before a second click counts. */
const CONFIRM_MS = 5_000;

/** What the server accepts for the plan as it stands (src/control/control-record.ts): by its control record, not its state alone. */
export function allowedActions(status: UiPlanStatus): ReadonlySet<PlanAction> {
  const allowed = new Set<PlanAction>();
  const control = status.control?.state;
  if (control === 'cancelled') return allowed; // final
  if (control === 'paused') allowed.add('resume');
  else if (status.state !== 'completed') allowed.add('pause');
  if (status.state !== 'completed') allowed.add('cancel');
  if (status.counts.failed > 0) allowed.add('retry');
  return allowed;
}

export class PlanActions {
  private readonly token: string | undefined;
  private status: UiPlanStatus | undefined;
  private busy = false;
  /** The plan is gone (deleted) or the stream is down: nothing is offered. */
  private offline = false;
  private disarmTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly bar = byId('actions');
  private readonly note = byId('action-note');
  private readonly reason = byId<HTMLInputElement>('cancel-reason');
  private readonly buttons: ReadonlyMap<PlanAction, HTMLButtonElement>;

  constructor(private readonly plan: string) {
    this.token = actionToken();
    this.buttons = new Map(
      (['pause', 'resume', 'cancel', 'retry'] as const).map((action) => [
        action,
        byId<HTMLButtonElement>(`action-${action}`),
      ]),
    );
    for (const [action, button] of this.buttons)
      button.addEventListener('click', () => void this.perform(action));
    if (document.body.dataset['actions'] !== 'true') return; // a read-only view: no bar at all
    this.bar.hidden = false;
    if (this.token === undefined)
      this.note.textContent = 'Actions need the token: open the URL that zk-plan ui printed.';
    this.refresh();
  }

  /** The plan's state changed. */
  update(status: UiPlanStatus): void {
    this.status = status;
    this.refresh();
  }

  /** The plan is gone or its stream is down (true), or back (false). */
  setOffline(offline: boolean): void {
    this.offline = offline;
    this.refresh();
  }

  private refresh(): void {
    const allowed =
      this.status === undefined || this.offline
        ? new Set<PlanAction>()
        : allowedActions(this.status);
    const usable = !this.busy && this.token !== undefined;
    for (const [action, button] of this.buttons) button.disabled = !usable || !allowed.has(action);
    this.reason.disabled = !usable || !allowed.has('cancel');
  }

  private async perform(action: PlanAction): Promise<void> {
    if (this.token === undefined || this.busy) return;
    if (action === 'cancel' && this.disarmTimer === undefined) {
      this.arm();
      return;
    }
    this.disarm();
    this.busy = true;
    this.refresh();
    try {
      const answer = await postAction(
        action,
        this.plan,
        this.token,
        action === 'cancel' ? this.reason.value.trim() : undefined,
      );
      this.note.dataset['outcome'] = 'ok';
      this.note.textContent = describe(action, answer);
      if (action === 'cancel') this.reason.value = '';
    } catch (error) {
      this.note.dataset['outcome'] = 'error';
      this.note.textContent = `${action} failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
      this.refresh();
    }
  }

  /** The first click on cancel: the next one within CONFIRM_MS cancels. */
  private arm(): void {
    const cancel = this.buttons.get('cancel');
    if (cancel === undefined) return;
    cancel.textContent = 'Really cancel?';
    cancel.dataset['armed'] = 'true';
    this.disarmTimer = setTimeout(() => this.disarm(), CONFIRM_MS);
  }

  private disarm(): void {
    clearTimeout(this.disarmTimer);
    this.disarmTimer = undefined;
    const cancel = this.buttons.get('cancel');
    if (cancel === undefined) return;
    cancel.textContent = 'Cancel';
    delete cancel.dataset['armed'];
  }
}

function describe(action: PlanAction, answer: Record<string, unknown>): string {
  switch (action) {
    case 'pause':
      return `Paused: no new task starts; ${count(answer['running'])} running task(s) finish.`;
    case 'resume':
      return 'Resumed.';
    case 'cancel':
      return 'Cancelled: running tasks were told to stop.';
    case 'retry':
      return `Retrying ${count(answer['reset'])} failed task(s).`;
  }
}

/** How many tasks an answer's list names. */
function count(tasks: unknown): number {
  return Array.isArray(tasks) ? tasks.length : 0;
}
