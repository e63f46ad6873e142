/** `zkPlan.logs`: what a task logged, read from any process, and followed live. */
import type { TaskLogAttempt } from '../logs/attempt-log-record.js';
import type { FollowLogOptions, FollowedLogLine, TaskLogQuery, TaskLogReader } from '../logs/task-log-reader.js';
import type { FacadeState } from './facade-state.js';

/**
 * `zkPlan.logs`: what a task logged, read from any process while it runs and after, and followed live.
 *
 * @category Sub-APIs
 */
export class LogsApi {
  /** @internal Made by ZkPlan; reach it as `zkPlan.logs`. */
  constructor(
    private readonly facade: FacadeState,
    private readonly reader: TaskLogReader,
  ) {}

  /**
   * What `task` logged (`ctx.log`, captured `console.*`): each try's last lines as kept in
   * ZooKeeper, oldest try first, while the task runs and after it is done, until its plan is
   * deleted. `attempt` picks one attempt's tries. A try that logged nothing has no record.
   */
  read(task: string, query: TaskLogQuery = {}): Promise<TaskLogAttempt[]> {
    this.facade.assertOpen();
    return this.reader.taskLog(task, query);
  }

  /** The lines of `task`'s log as they are written (those kept so far first), until the task is done or has failed for good, or `signal` aborts. */
  follow(task: string, options: FollowLogOptions = {}): AsyncGenerator<FollowedLogLine, void, undefined> {
    this.facade.assertOpen();
    return this.reader.followLog(task, options);
  }
}
