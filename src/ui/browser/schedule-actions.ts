/**
 * A schedule row's "Trigger now" button: runs the schedule now (`schedules(parent).trigger`, also
 * while paused: one manual tick and its plan, built by the view's process). The rows are drawn
 * again on every refresh, so each schedule's last outcome is kept here and shown again.
 */
import { actionAccess, postAction, type ActionAccess } from './api.js';
import { h, planTaskHref } from './dom.js';

/** The last outcome of a trigger from this page: a sentence, the plan it made, and whether it failed. */
interface TriggerOutcome {
  readonly text: string;
  readonly plan?: string;
  readonly failed: boolean;
}

/** The last outcome per schedule. */
const outcomes = new Map<string, TriggerOutcome>();
/** Schedules whose trigger is under way: their button stays disabled through re-renders. */
const busy = new Set<string>();
/** What `/api/actions` said, read once per page (the rows are drawn every few seconds). */
let access: Promise<ActionAccess> | undefined;

/** The button and its last outcome for one schedule's row; `redraw` draws the rows again once a trigger is answered. */
export function triggerControl(schedule: string, redraw: () => void): HTMLElement {
  access ??= actionAccess();
  const known = access;
  const wrap = h('div', undefined, 'task-actions');
  const button = h('button', busy.has(schedule) ? 'Triggering…' : 'Trigger now');
  button.type = 'button';
  button.dataset['trigger'] = schedule;
  button.disabled = true;
  button.title = 'Runs the schedule now (also while paused): one plan, built by this view.';
  wrap.appendChild(button);
  known.then(
    (answer) => {
      button.disabled = !answer.usable || busy.has(schedule);
      if (!answer.usable) button.title = answer.why ?? '';
    },
    () => undefined, // the button stays disabled
  );
  button.addEventListener('click', () => {
    busy.add(schedule);
    button.disabled = true;
    void trigger(known, schedule).then((outcome) => {
      outcomes.set(schedule, outcome);
      busy.delete(schedule);
      redraw();
    });
  });
  const outcome = outcomes.get(schedule);
  if (outcome !== undefined) wrap.appendChild(outcomeNote(outcome));
  return wrap;
}

async function trigger(known: Promise<ActionAccess>, schedule: string): Promise<TriggerOutcome> {
  try {
    const answer = await postAction('trigger', { schedule }, (await known).token);
    const state = String(answer['state']);
    return {
      text: state === 'fired' ? 'Triggered: ' : `Triggered (${state}): `,
      plan: String(answer['plan']),
      failed: false,
    };
  } catch (error) {
    return {
      text: `Trigger failed: ${error instanceof Error ? error.message : String(error)}`,
      failed: true,
    };
  }
}

function outcomeNote(outcome: TriggerOutcome): HTMLElement {
  const note = h('span', outcome.text, 'action-note');
  note.dataset['outcome'] = outcome.failed ? 'error' : 'ok';
  if (outcome.plan !== undefined) {
    const link = h('a', outcome.plan.slice(outcome.plan.lastIndexOf('/') + 1));
    link.href = planTaskHref(outcome.plan);
    note.appendChild(link);
  }
  return note;
}
