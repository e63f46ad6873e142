/**
 * The plan page's side panel: the selected task's function, params, inputs, owner, attempts,
 * error or result, and, for a task that is not done, why it is not running (`/api/why`).
 */
import type { UiExplanation, UiTaskDetail } from '../ui-wire.js';
import { getJson } from './api.js';
import { definition, h, planTaskHref, when } from './dom.js';
import { shortLabel } from './graph.js';
import { TaskLogView } from './task-log-view.js';
import { RerunControl, failedForGoodText, willRetryText } from './task-actions.js';

/** How long the panel waits after a change of the selected task before reading it again (changes come in bursts). */
const REFRESH_DELAY_MS = 100;

export class TaskPanel {
  private selected: string | undefined;
  private seq = 0;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  /** The selected task's log, kept across the panel's re-renders (its polling and scroll with it). */
  private logView: TaskLogView | undefined;
  /** The selected task's "Rerun from here", kept across re-renders with its outcome. */
  private rerun: RerunControl | undefined;

  constructor(
    private readonly panel: HTMLElement,
    private readonly plan: string,
    /** Selects a task on the canvas too (an input's link in the panel). */
    private readonly onSelectInput: (name: string) => void,
    /** The key of a task drawn on the canvas (the panel's inputs, and a gone task, are named by it). */
    private readonly keyOf: (name: string) => string | undefined = () => undefined,
  ) {}

  get task(): string | undefined {
    return this.selected;
  }

  show(name: string): void {
    this.selected = name;
    this.logView?.stop();
    this.logView = undefined;
    this.rerun = undefined;
    void this.load();
  }

  /** Stops reading: the pending refresh and the log's polling end, and a read under way is ignored. */
  close(): void {
    clearTimeout(this.refreshTimer);
    this.logView?.stop();
    this.logView = undefined;
    this.rerun = undefined;
    this.selected = undefined;
    this.seq += 1;
  }

  /** The selected task may have changed: read it again soon. */
  refresh(): void {
    if (this.selected === undefined) return;
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.load(), REFRESH_DELAY_MS);
  }

  private async load(): Promise<void> {
    const name = this.selected;
    if (name === undefined) return;
    const seq = ++this.seq;
    const path = encodeURIComponent(`${this.plan}/${name}`);
    try {
      const detail = await getJson<UiTaskDetail>(`/api/task?path=${path}`);
      if (seq !== this.seq) return; // a newer read is under way
      this.render(detail);
      this.showLog(detail);
      if (detail.gone || detail.state === 'done') return;
      const why = await getJson<UiExplanation>(`/api/why?path=${path}`).catch(
        (error: unknown) => error as Error,
      );
      if (seq === this.seq) this.panel.appendChild(whySection(why));
    } catch (error) {
      if (seq === this.seq)
        this.problem(name, error instanceof Error ? error.message : String(error));
    }
  }

  /** The log section under the facts: live while the task may still log (not done, not failed for good, not gone). */
  private showLog(detail: UiTaskDetail): void {
    if (this.logView?.task !== detail.task) {
      this.logView?.stop();
      this.logView = new TaskLogView(detail.task);
    }
    this.panel.appendChild(this.logView.element);
    this.logView.setLive(
      !detail.gone &&
        detail.state !== 'done' &&
        detail.state !== 'failed' &&
        detail.state !== 'cancelled',
    );
  }

  private problem(name: string, message: string): void {
    this.panel.textContent = '';
    this.panel.appendChild(h('h2', this.keyOf(name) ?? shortLabel(name)));
    this.panel.appendChild(h('p', message, 'hint'));
  }

  private render(detail: UiTaskDetail): void {
    const { panel } = this;
    panel.textContent = '';
    panel.dataset['task'] = detail.task;
    // Known by its key when it has one (its spec's, or addTask's { key }); the node name beside it.
    const key = detail.key ?? this.keyOf(detail.name);
    const title = h('h2', key ?? shortLabel(detail.name));
    title.id = 'detail-title';
    title.appendChild(
      h('small', key !== undefined ? `${shortLabel(detail.name)} ${detail.name}` : detail.name),
    );
    panel.appendChild(title);
    const pill = h(
      'span',
      detail.state + (detail.gone && detail.goneReason !== 'cancelled' ? ' (no record kept)' : ''),
      'pill',
    );
    pill.dataset['state'] = detail.state;
    pill.id = 'detail-state';
    panel.appendChild(pill);
    if (this.rerun?.task !== detail.task) this.rerun = new RerunControl(detail.task);
    this.rerun.update(detail);
    panel.appendChild(this.rerun.element);

    const list = h('dl');
    if (key !== undefined) definition(list, 'Key', h('code', key, 'key'));
    definition(list, 'Path', h('code', detail.task));
    if (detail.gone) {
      definition(
        list,
        'Note',
        detail.goneReason === 'cancelled'
          ? 'The plan was cancelled: this task was deleted before it finished (whether it had started is not recorded).'
          : 'The task finished and its node is gone; this plan keeps no history (it was created with { history: false }).',
      );
      panel.appendChild(list);
    } else {
      this.facts(list, detail);
      panel.appendChild(list);
      panel.appendChild(h('h3', 'Params'));
      panel.appendChild(h('pre', detail.params, 'params'));
    }
    if (detail.failure) panel.appendChild(failureSection(detail.failure, detail.maxAttempts));
    if (detail.result) {
      const result = h('section', undefined, 'result');
      result.id = 'detail-result';
      result.appendChild(h('h3', 'Result'));
      result.appendChild(
        'value' in detail.result
          ? h('pre', detail.result.value, 'value')
          : h('p', detail.result.unavailable, 'hint'),
      );
      panel.appendChild(result);
    }
  }

  private facts(list: HTMLDListElement, detail: UiTaskDetail): void {
    definition(list, 'Function', h('code', detail.fn, 'fn'));
    const inputs = h('ul', undefined, 'inputs');
    for (const input of detail.inputs) {
      const name = input.slice(input.lastIndexOf('/') + 1);
      const link = h('a', `${this.keyOf(name) ?? shortLabel(name)} ${name}`);
      link.href = '#';
      link.addEventListener('click', (event) => {
        event.preventDefault();
        this.onSelectInput(name);
      });
      const item = h('li');
      item.appendChild(link);
      inputs.appendChild(item);
    }
    definition(list, 'Inputs', detail.inputs.length > 0 ? inputs : 'none');
    if (detail.pendingInputs > 0)
      definition(list, 'Waiting for', `${detail.pendingInputs} input(s)`);
    if (detail.continuedBy !== undefined) {
      const name = detail.continuedBy.slice(detail.continuedBy.lastIndexOf('/') + 1);
      const link = h('a', `${this.keyOf(name) ?? shortLabel(name)} ${name}`);
      link.href = '#';
      link.addEventListener('click', (event) => {
        event.preventDefault();
        this.onSelectInput(name);
      });
      // Its result is (or became) the continuation's: ctx.continueWith.
      definition(list, 'Handed over to', link);
    }
    if (detail.subPlan !== undefined) {
      // A sub-plan task: its child plan, on its own page.
      const link = h('a', detail.subPlan);
      link.href = planTaskHref(detail.subPlan);
      definition(list, 'Child plan', link);
    }
    definition(
      list,
      'Priority',
      detail.priority !== undefined ? `${detail.priority} (its own)` : "the plan's",
    );
    definition(list, 'Limit key', detail.concurrencyKey);
    definition(
      list,
      'Runs when',
      detail.trigger === undefined ? undefined : (TRIGGER_WORDS[detail.trigger] ?? detail.trigger),
    );
    if (detail.skipped !== undefined) definition(list, 'Skipped', detail.skipped);
    if (detail.waiting !== undefined)
      definition(
        list,
        'Waits',
        `${detail.waiting.reason} (check ${detail.waiting.checks}; next ${when(detail.waiting.nextCheckAt) ?? '?'})`,
      );
    definition(list, 'Keeps result', detail.keepResult ? 'yes' : 'no');
    if (detail.owner)
      definition(
        list,
        'Running on',
        `${detail.owner.workerId} since ${when(detail.owner.claimedAt) ?? '?'}`,
      );
    if (detail.attempts && !detail.failure) {
      definition(list, 'Attempts', willRetryText(detail.attempts, detail.maxAttempts));
      definition(list, 'Last error', detail.attempts.lastError);
    }
    if (detail.cancelledAt !== undefined)
      definition(
        list,
        'Cancelled',
        `${when(detail.cancelledAt) ?? '?'}, while ${detail.was ?? '?'}`,
      );
    if (detail.omitted)
      definition(
        list,
        'Note',
        'Its params and inputs were not kept: its history record would have been larger than a znode may be.',
      );
    definition(list, 'Started', when(detail.startedAt));
    definition(list, 'Finished', when(detail.finishedAt));
    if (detail.durationMs !== undefined) definition(list, 'Duration', `${detail.durationMs} ms`);
    definition(list, 'Worker', detail.workerId);
    definition(list, 'Blocked', detail.blockedReason);
  }
}

function failureSection(
  failure: NonNullable<UiTaskDetail['failure']>,
  maxAttempts: number | undefined,
): HTMLElement {
  const section = h('section', undefined, 'error');
  section.id = 'detail-error';
  section.appendChild(h('h3', 'Error'));
  const head = h('div');
  head.appendChild(h('code', failure.code, 'code'));
  head.appendChild(document.createTextNode(` ${failure.type}`));
  section.appendChild(head);
  section.appendChild(h('div', failure.message, 'message'));
  const facts = h('dl');
  // A failed task is over whatever its error said of itself: only a retry of the plan's failed tasks runs it again.
  const outcome = h('dd', failedForGoodText(failure, maxAttempts));
  outcome.id = 'detail-outcome';
  facts.appendChild(h('dt', 'Outcome'));
  facts.appendChild(outcome);
  definition(facts, 'Worker', failure.workerId);
  definition(facts, 'At', when(failure.at));
  section.appendChild(facts);
  if (failure.stack) {
    section.appendChild(h('h3', 'Stack (excerpt)'));
    section.appendChild(h('pre', failure.stack, 'stack'));
  }
  return section;
}

/** "Why isn't it running?": explainTask's code, sentence and the facts behind it. */
function whySection(why: UiExplanation | Error): HTMLElement {
  const section = h('section', undefined, 'why');
  section.id = 'detail-why';
  section.appendChild(h('h3', 'Why is it not running?'));
  if (why instanceof Error) {
    section.appendChild(h('p', `Could not tell: ${why.message}`, 'hint'));
    return section;
  }
  const code = h('code', why.code, 'code');
  code.id = 'why-code';
  section.appendChild(code);
  section.appendChild(h('p', why.message, 'message'));
  if (why.remedy !== undefined) section.appendChild(h('p', `To go on: ${why.remedy.cli}`, 'hint'));
  if (Object.keys(why.details).length > 0)
    section.appendChild(h('pre', JSON.stringify(why.details, null, 2), 'details'));
  return section;
}

/** A trigger rule, in words. */
const TRIGGER_WORDS: Readonly<Record<string, string>> = {
  allDone: 'every input ended, however (allDone)',
  anySucceeded: 'an input succeeded (anySucceeded)',
  oneFailed: 'an input failed for good (oneFailed)',
};
