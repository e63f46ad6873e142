import { ZkPlanError, named } from './base-error.js';

/**
 * Thrown by `ctx.spawn` when a run of a task asks for other tasks than an earlier run of the same
 * task recorded for that call (its n-th `ctx.spawn`), and by a task's hand-over when a run
 * continues with another function than an earlier run did (`ctx.continueWith`), or returns a value
 * where an earlier run handed over (`call` is then `'continuation'`): the earlier run's tasks
 * exist and may be running, so the call cannot make others in their place. A task's spawn calls
 * and hand-over must depend only on its params and inputs (not on the time, a random number or an
 * outside source read again). The try fails for good: running it again would ask the same.
 *
 * @category Errors
 */
export class SpawnMismatchError extends ZkPlanError {
  readonly code = 'SPAWN_MISMATCH';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    readonly call: number | 'continuation',
    readonly recorded: readonly string[],
    readonly asked: readonly string[],
  ) {
    super(
      call === 'continuation'
        ? `Task ${task} ${asked.length === 0 ? 'returned a value' : `handed over to ${describe(asked)}`}, but an earlier run of it handed over to ${describe(recorded)} with ctx.continueWith: ` +
            'a task must hand over to the same task every time it runs (derive it from its params and inputs only)'
        : `Task ${task} asked its spawn call ${call} for ${describe(asked)}, but an earlier run of it spawned ${describe(recorded)} there: ` +
            'a task must spawn the same tasks every time it runs (derive them from its params and inputs only)',
      { path: task },
    );
  }
}
named(SpawnMismatchError, 'SpawnMismatchError');

function describe(fns: readonly string[]): string {
  const shown = fns.slice(0, 5).join(', ');
  return `${fns.length} task(s) [${shown}${fns.length > 5 ? ', …' : ''}]`;
}
