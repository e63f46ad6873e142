import { ZkPlanError, named } from './base-error.js';

/**
 * Thrown by `ctx.spawn` when a run of a task asks for other tasks than an earlier run of the same
 * task recorded for that call (its n-th `ctx.spawn`): the earlier run's tasks exist and may be
 * running, so the call cannot make others in their place. A task's spawn calls must depend only on
 * its params and inputs (not on the time, a random number or an outside source read again). The
 * try fails for good: running it again would ask the same.
 *
 * @category Errors
 */
export class SpawnMismatchError extends ZkPlanError {
  readonly code = 'SPAWN_MISMATCH';
  override readonly charged = true;
  override readonly retryable = false;
  constructor(
    task: string,
    readonly call: number,
    readonly recorded: readonly string[],
    readonly asked: readonly string[],
  ) {
    super(
      `Task ${task} asked its spawn call ${call} for ${describe(asked)}, but an earlier run of it spawned ${describe(recorded)} there: ` +
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
