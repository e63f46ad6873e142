/**
 * The task logs of one worker pool (or loop): opens each try's log (TryLog) with the pool's
 * settings, runs the task function with its console captured, echoes lines to the worker's own
 * output, and prunes the sink of plans that no longer exist.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { ResolvedTaskLogOptions } from '../config/task-log-options.js';
import { nameOf } from '../zk/layout.js';
import { printable } from '../util/printable.js';
import type { Zk } from '../zk/zk.js';
import { installConsoleCapture, originalConsole, runCaptured } from './console-capture.js';
import { FileLogSink } from './file-log-sink.js';
import type { LogSink, TryIdentity, TrySink } from './log-sink.js';
import { TaskLogStore, tryNodeName } from './task-log-store.js';
import type { LogLine, TaskLogger } from './task-log-types.js';
import { TryLog } from './try-log.js';

/** Which try is starting, for `TaskLogs.open`. */
export interface TryStart {
  readonly plan: string;
  readonly task: string;
  /** The task's key, for the echoed label (the task's node name when it has none). */
  readonly key?: string;
  /** The plan's name, for the echoed label (the plan's node name when it has none). */
  readonly planName?: string;
  readonly attempt: number;
  readonly workerId: string;
  /** The id of the ZooKeeper session that claimed the task: with the worker id and a counter, it names this run's log node. */
  readonly sessionId: string;
}

/** A try's logger, and how to end it. */
export interface OpenTryLog {
  readonly logger: TaskLogger;
  /** Runs the task function: its console calls go to this try's log (when the pool captures them). */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Writes the last lines (awaited before the try's outcome is recorded). */
  finish(): Promise<void>;
}

export class TaskLogs {
  private readonly store: TaskLogStore;
  private readonly sink: LogSink | undefined;
  private readonly host = hostname();
  /** Runs opened so far by this pool: part of each run's id. */
  private runs = 0;

  constructor(
    private readonly zk: Zk,
    private readonly options: ResolvedTaskLogOptions | false,
    private readonly onError: (error: unknown) => void,
  ) {
    this.store = new TaskLogStore(zk);
    this.sink =
      options === false || options.sink === false ? undefined : (options.sink ?? new FileLogSink());
    if (options !== false && options.captureConsole) installConsoleCapture();
  }

  open(start: TryStart): OpenTryLog {
    // The plan's name and the task's key come from ZooKeeper: made printable before they reach a terminal.
    const label = printable(
      `[${start.planName ?? nameOf(start.plan)} ${start.key ?? nameOf(start.task)} #${start.attempt}]`,
      { multiline: false },
    );
    const echo =
      this.options === false || this.options.echo
        ? (line: LogLine): void => echoLine(label, line)
        : undefined;
    if (this.options === false) return echoOnly(echo);
    // The run's id: unique (a session is the cluster's only once, a worker id its process's, the counter this pool's) and
    // derived from them, not drawn at random, so that a seeded simulation writes the same nodes on every replay.
    this.runs += 1;
    const runId = createHash('sha1')
      .update(`${start.sessionId}\u0000${start.workerId}\u0000${this.runs}`)
      .digest('hex')
      .slice(0, 12);
    const identity = {
      plan: start.plan,
      task: start.task,
      attempt: start.attempt,
      workerId: start.workerId,
      tryName: tryNodeName(start.attempt, runId),
    };
    const log = new TryLog({
      identity,
      store: this.store,
      settings: this.options,
      ...(this.sink ? { sink: openOnFirstUse(this.sink, identity) } : {}),
      host: this.host,
      ...(echo ? { echo } : {}),
      onError: this.onError,
    });
    const capture = this.options.captureConsole;
    return {
      logger: log.logger,
      run: (fn) => (capture ? runCaptured(log, fn) : fn()),
      finish: () => log.finish(),
    };
  }

  /**
   * Removes the sink's logs of plans that are gone (deleted, or removed by retention) now and every
   * `intervalMs`, until the returned function is called. Every pool prunes its own sink: the
   * files are on its host, where the cluster's one retention sweeper may not run.
   */
  startPruning(intervalMs: number): () => void {
    const prune = this.sink?.prune?.bind(this.sink);
    if (prune === undefined) return () => undefined;
    const planExists = async (plan: string): Promise<boolean> =>
      (await this.zk.exists(plan)) !== undefined;
    let running: Promise<void> | undefined;
    const pass = (): void => {
      running ??= prune(planExists)
        .catch((error: unknown) => this.onError(error))
        .finally(() => {
          running = undefined;
        });
    };
    pass();
    const timer = setInterval(pass, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

/**
 * The sink's log of a try, opened when its first line comes: most tries log nothing, and opening a
 * file (a directory made, a stream opened) for each of them cost a third of a hop's time.
 */
function openOnFirstUse(sink: LogSink, identity: TryIdentity): TrySink {
  let opened: TrySink | undefined;
  const open = (): TrySink => (opened ??= sink.open(identity));
  return {
    get location() {
      return open().location;
    },
    get url() {
      return open().url;
    },
    write: (line) => open().write(line),
    close: async () => await opened?.close(),
  };
}

/** With `taskLogs: false`: ctx.log still shows on the worker's output, nothing is kept. */
function echoOnly(echo: ((line: LogLine) => void) | undefined): OpenTryLog {
  const at =
    (level: LogLine['level']) =>
    (msg: string, fields?: LogLine['fields']): void =>
      echo?.({ time: new Date(), level, msg, ...(fields ? { fields } : {}) });
  return {
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    run: (fn) => fn(),
    finish: async () => undefined,
  };
}

function echoLine(label: string, line: LogLine): void {
  const fields = line.fields === undefined ? '' : ` ${JSON.stringify(line.fields)}`;
  const text = `${label} ${line.msg}${fields}`;
  if (line.level === 'error') originalConsole.error(text);
  else if (line.level === 'warn') originalConsole.warn(text);
  else if (line.level === 'debug') originalConsole.debug(text);
  else originalConsole.log(text);
}
