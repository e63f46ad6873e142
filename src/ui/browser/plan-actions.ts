/**
 * The plan page's pause, resume, cancel and retry buttons. Shown only when the view accepts
 * actions (`/api/cluster` says so: `zk-plan ui --allow-actions`) and this tab holds the token;
 * each button is enabled only where its action makes sense for the plan's state.
 */
import type { UiCluster, UiPlanStatus } from '../ui-wire.js';
import { actionToken, getJson, postAction, type PlanAction } from './api.js';
import { byId } from './dom.js';

/** A cancel button asks again for this long before a second click counts. */
const CONFIRM_MS = 5_000;

/** Which actions the plan's state allows (the server refuses the rest with a clear error anyway). */
export function allowedActions(status: UiPlanStatus): ReadonlySet<PlanAction> {
  const allowed = new Set<PlanAction>();
  if (status.state === 'building' || status.state === 'running') allowed.add('pause');
  if (status.state === 'paused') allowed.add('resume');
  if (status.state !== 'completed' && status.state !== 'failed' && status.state !== 'cancelled') allowed.add('cancel');
  if (status.state !== 'cancelled' && status.counts.failed > 0) allowed.add('retry');
  return allowed;
}

export class PlanActions {
  private token: string | undefined;
  private status: UiPlanStatus | undefined;
  private busy = false;
  private armedUntil = 0;
  private readonly bar = byId('actions');
  private readonly note = byId('action-note');
  private readonly reason = byId<HTMLInputElement>('cancel-reason');
  private readonly buttons: ReadonlyMap<PlanAction, HTMLButtonElement>;

  constructor(private readonly plan: string) {
    this.buttons = new Map((['pause', 'resume', 'cancel', 'retry'] as const).map((action) => [action, byId<HTMLButtonElement>(`action-${action}`)]));
    for (const [action, button] of this.buttons) button.addEventListener('click', () => void this.perform(action));
  }

  /** Asks the view whether it accepts actions; shows the bar when it does. */
  async start(): Promise<void> {
    this.token = actionToken();
    const cluster = await getJson<UiCluster>('/api/cluster');
    if (!cluster.actions) return; // read-only view: no bar at all
    this.bar.hidden = false;
    if (this.token === undefined) this.note.textContent = 'Actions need the token: open the URL that zk-plan ui printed.';
    this.refresh();
  }

  /** The plan's state changed. */
  update(status: UiPlanStatus): void {
    this.status = status;
    this.refresh();
  }

  private refresh(): void {
    const allowed = this.status === undefined ? new Set<PlanAction>() : allowedActions(this.status);
    for (const [action, button] of this.buttons) button.disabled = this.busy || this.token === undefined || !allowed.has(action);
    this.reason.disabled = this.busy || this.token === undefined || !allowed.has('cancel');
  }

  private async perform(action: PlanAction): Promise<void> {
    if (this.token === undefined || this.busy) return;
    const cancel = this.buttons.get('cancel');
    if (action === 'cancel' && cancel !== undefined && Date.now() > this.armedUntil) {
      this.armedUntil = Date.now() + CONFIRM_MS;
      cancel.textContent = 'Really cancel?';
      cancel.dataset['armed'] = 'true';
      setTimeout(() => this.disarm(), CONFIRM_MS);
      return;
    }
    this.disarm();
    this.busy = true;
    this.refresh();
    try {
      const answer = await postAction(action, this.plan, this.token, action === 'cancel' ? this.reason.value.trim() : undefined);
      this.note.dataset['outcome'] = 'ok';
      this.note.textContent = describe(action, answer);
    } catch (error) {
      this.note.dataset['outcome'] = 'error';
      this.note.textContent = `${action} failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
      this.refresh();
    }
  }

  private disarm(): void {
    this.armedUntil = 0;
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
