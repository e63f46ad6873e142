/**
 * The plan page's pause, resume, cancel and retry buttons. Usable when the view takes actions from
 * this page (`/api/actions`: its own pages on loopback, or with the token this tab holds); else the
 * bar says why and how to start the view with them. Each button is enabled only where the server
 * would accept its action; cancel asks for a second click.
 */
import type { UiPlanStatus } from '../ui-wire.js';
import { actionAccess, postAction, type ActionAccess, type PlanAction } from './api.js';
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
  /** Undefined until `/api/actions` answered: no button is usable before. */
  private access: ActionAccess | undefined;
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
    this.buttons = new Map(
      (['pause', 'resume', 'cancel', 'retry'] as const).map((action) => [
        action,
        byId<HTMLButtonElement>(`action-${action}`),
      ]),
    );
    for (const [action, button] of this.buttons)
      button.addEventListener('click', () => void this.perform(action));
    this.bar.hidden = false;
    this.refresh();
    void actionAccess().then(
      (access) => {
        this.access = access;
        if (access.why !== undefined) this.note.textContent = access.why;
        this.refresh();
      },
      (error: unknown) => {
        this.note.dataset['outcome'] = 'error';
        this.note.textContent = `Could not tell whether actions are on: ${error instanceof Error ? error.message : String(error)}`;
      },
    );
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
    const usable = !this.busy && this.access?.usable === true;
    for (const [action, button] of this.buttons) button.disabled = !usable || !allowed.has(action);
    this.reason.disabled = !usable || !allowed.has('cancel');
  }

  private async perform(action: PlanAction): Promise<void> {
    if (this.access?.usable !== true || this.busy) return;
    if (action === 'cancel' && this.disarmTimer === undefined) {
      this.arm();
      return;
    }
    this.disarm();
    this.busy = true;
    this.refresh();
    try {
      const reason = action === 'cancel' ? this.reason.value.trim() : '';
      const answer = await postAction(
        action,
        { path: this.plan, ...(reason !== '' ? { reason } : {}) },
        this.access.token,
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
