import { Option, type Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import type { PlanEventListener } from '../../alerts/plan-event-watcher.js';
import type { FunctionRegistry } from '../../exec/function-registry.js';
import type { MetricsServer } from '../../observability/metrics.js';
import type { ZkPlan } from '../../zk-plan.js';
import { setAction, withUsageHint } from '../action.js';
import { connectZkPlan } from '../connection.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { loadFunctions } from '../load-functions.js';
import {
  addConnectionOptions,
  checkParentPath,
  integer,
  requireConnect,
  type ConnectionOptions,
} from '../options.js';
import { StopSignals } from '../stop-signals.js';
import {
  createWorkerLog,
  logUndeliveredAlert,
  type LogFormat,
  type WorkerLog,
} from '../worker-log.js';
import { jobRunWebhook, webhookListener, type JobRunWebhookBody } from '../../alerts/webhook.js';
import { forwardJobRunFailures } from '../../alerts/job-run-alerts.js';
import { InvalidArgumentError } from '../../errors/usage-errors.js';
import { ALERT_WEBHOOK_ENV, readSecretFile, takeSecretEnv } from '../credentials.js';
import { print, printJsonLine } from '../output.js';
import { FileLogSink } from '../../logs/file-log-sink.js';
import { startLogServer, type LogServer } from '../../logs/log-server.js';

interface WorkerCommandOptions extends ConnectionOptions {
  readonly parent?: string;
  readonly functions?: string;
  readonly workers: number;
  readonly allowInline: boolean;
  readonly allowShell: boolean;
  readonly shellKillGraceMs?: number;
  readonly sessionTimeoutMs?: number;
  readonly drainTimeoutMs?: number;
  readonly retentionMaxAgeMs?: number;
  readonly retentionMaxCount?: number;
  /** commander's `--no-retention`: false when given. */
  readonly retention: boolean;
  readonly metricsPort?: number;
  readonly metricsHost: string;
  readonly logLevel: string;
  readonly logFormat?: LogFormat;
  readonly alertWebhook?: string;
  readonly alertWebhookFile?: string;
  readonly alertTimeoutMs: number;
  readonly schedules?: string;
  readonly jobs?: string;
  readonly leaseMs?: number;
  readonly taskLogDir?: string;
  readonly taskLogPort?: number;
  readonly taskLogHost: string;
  /** commander's `--no-task-log-capture`: false when given. */
  readonly taskLogCapture: boolean;
  /** commander's `--no-task-log-echo`: false when given. */
  readonly taskLogEcho: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** `zk-plan worker`: worker loops in this process until SIGTERM or SIGINT. */
export function registerWorker(program: Command): void {
  const command = program
    .command('worker')
    .description('run worker loops on every plan under a parent until SIGTERM or SIGINT')
    .addOption(
      new Option(
        '--parent <path>',
        'znode under which the plans are (required unless --jobs is given)',
      ),
    )
    .addOption(
      new Option(
        '--functions <module>',
        'module (.js, .mjs, or TypeScript: .ts, .mts, .cts) exporting `functions` or a default export: a FunctionRegistry or an object of functions (required)',
      ),
    )
    .addOption(
      new Option('--workers <n>', 'worker loops sharing this process’s session')
        .argParser(integer(1, 10_000))
        .default(1),
    )
    .addOption(
      new Option(
        '--allow-inline',
        'run tasks holding inline source (vm2 sandbox in a worker thread): only when every task writer is trusted',
      ).default(false),
    )
    .addOption(
      new Option(
        '--allow-shell',
        "run shell tasks (fn: shell, call('shell', { command, … })) as this process's user: only when every task writer may run commands here; without it, shell tasks are left to workers that have it",
      ).default(false),
    )
    .addOption(
      new Option(
        '--shell-kill-grace-ms <ms>',
        `with --allow-shell: after SIGTERM to a stopped shell task's process group (timeout, pause --abort-running, cancel, drain), how long before SIGKILL (default: ${DEFAULTS.shell.killGraceMs})`,
      ).argParser(integer(0)),
    )
    .addOption(
      new Option(
        '--session-timeout-ms <ms>',
        'ZooKeeper session timeout: how long the tasks of a dead worker stay owned (default: 10000)',
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--drain-timeout-ms <ms>',
        'on SIGTERM/SIGINT, how long running tasks may finish before they are released (default: 30000)',
      ).argParser(integer(0)),
    )
    .addOption(
      new Option(
        '--retention-max-age-ms <ms>',
        'delete finished plans created longer ago than this (default: 604800000, 7 days)',
      ).argParser(integer(0)),
    )
    .addOption(
      new Option(
        '--retention-max-count <n>',
        'keep at most this many finished plans under the parent, the newest (default: 1000)',
      ).argParser(integer(0)),
    )
    .addOption(new Option('--no-retention', 'keep finished plans for ever (until zk-plan rm)'))
    .addOption(
      new Option(
        '--metrics-port <port>',
        'serve Prometheus metrics at http://<metrics-host>:<port>/metrics (0: a free port)',
      ).argParser(integer(0, 65_535)),
    )
    .addOption(
      new Option('--metrics-host <host>', 'address the metrics server listens on').default(
        DEFAULTS.listenHost,
      ),
    )
    .addOption(
      new Option(
        '--alert-webhook <url>',
        `POST a JSON body when a task fails for good or a plan fails, is cancelled or completes (once per event across all workers with the option), and, with --jobs, when a run of a job function fails. Every user of the machine sees it in ps: a URL holding a secret goes in $${ALERT_WEBHOOK_ENV} or --alert-webhook-file`,
      ),
    )
    .addOption(
      new Option(
        '--alert-webhook-file <path>',
        'as --alert-webhook, the URL read from this file, readable by its owner only (chmod 600)',
      ),
    )
    .addOption(
      new Option(
        '--alert-timeout-ms <ms>',
        'time limit of one webhook POST; a failed POST is tried again with doubling pauses',
      )
        .argParser(integer(1))
        .default(DEFAULTS.planEvents.webhookTimeoutMs),
    )
    .addOption(
      new Option(
        '--schedules <path>',
        'also fire the schedules under this parent (any number of workers may: one plan per tick)',
      ),
    )
    .addOption(
      new Option(
        '--jobs <path>',
        'also run the jobs under this parent whose functions the module registers (registerJob, or its `jobs` export)',
      ),
    )
    .addOption(
      new Option(
        '--lease-ms <ms>',
        `with --jobs: how long an item's lease lasts unless renewed (default: ${DEFAULTS.jobs.leaseMs})`,
      ).argParser(integer(300)),
    )
    .addOption(
      new Option(
        '--task-log-dir <dir>',
        "directory of the tasks' whole logs, one file per try (default: <tmpdir>/zk-plan-logs)",
      ),
    )
    .addOption(
      new Option(
        '--task-log-port <port>',
        "serve the tasks' whole logs this worker writes at http://<task-log-host>:<port>/logs/ (0: a free port), for zk-plan logs --full and the web view",
      ).argParser(integer(0, 65_535)),
    )
    .addOption(
      new Option('--task-log-host <host>', 'address the task log server listens on').default(
        DEFAULTS.listenHost,
      ),
    )
    .addOption(
      new Option(
        '--no-task-log-capture',
        'do not capture what task functions write with console.* (ctx.log is still kept)',
      ),
    )
    .addOption(
      new Option('--no-task-log-echo', "do not show task log lines on this worker's output"),
    )
    .addOption(
      new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default(DEFAULTS.logLevel),
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'logs on stderr, one line per event: plain lines, pretty (time and level first) or json (pino JSON lines); default: pretty on a terminal, else plain; json with --json',
      ).choices(['plain', 'pretty', 'json']),
    );
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.worker);
  command.addHelpText(
    'after',
    `
Prints one line on stdout once its loops run ("zk-plan worker: <n> loop(s) on …"; with --json a JSON
document { event: "started", loops, parent, connect, functions, pid, metrics?, allowShell? }), logs on stderr.
With --allow-shell it also runs shell tasks: each command in a process group of its own, its stdout
and stderr in the task's log line by line, its result { exitCode: 0, stdout } with stdout's first
${DEFAULTS.shell.maxStdoutBytes / 1024} KiB (another exit fails the try: SHELL_EXIT), stopped with its group (SIGTERM, then SIGKILL
after --shell-kill-grace-ms) on the task's timeout, a pause --abort-running, a cancel or a drain.
On SIGTERM or SIGINT (caught from the moment it is connected, so also right after the start line)
it stops taking tasks, lets running ones finish (--drain-timeout-ms) or releases them, closes its
session and exits 0. A second signal releases running tasks at once
(exit ${ExitCode.interrupted}).`,
  );
  withUsageHint(command);
  setAction(command, runWorker);
}

async function runWorker(options: WorkerCommandOptions): Promise<void> {
  const connect = requireConnect(options);
  if (!options.parent && !options.jobs)
    throw new UsageError('--parent is required (or --jobs, for a worker that runs jobs only)');
  if (!options.functions) throw new UsageError('--functions is required');
  const parent = options.parent === undefined ? undefined : checkParentPath(options.parent);
  const jobs = options.jobs === undefined ? undefined : checkParentPath(options.jobs);
  if (options.leaseMs !== undefined && jobs === undefined)
    throw new UsageError('--lease-ms goes with --jobs');
  if (options.shellKillGraceMs !== undefined && !options.allowShell)
    throw new UsageError('--shell-kill-grace-ms goes with --allow-shell');
  const schedules =
    options.schedules === undefined ? undefined : checkParentPath(options.schedules);
  const functions = await loadFunctions(options.functions);
  // Checked before connecting: a bad URL is a usage error (exit 2).
  const alerts = await alertWebhookListeners(options);
  const format: LogFormat =
    options.logFormat ?? (options.json ? 'json' : process.stderr.isTTY ? 'pretty' : 'plain');
  const log = await createWorkerLog(format, options.logLevel);
  const zkPlan = await connectZkPlan(options, {
    functions,
    sessionTimeoutMs: options.sessionTimeoutMs,
  });
  // Caught from here on, before the loops start and long before the start line: a SIGTERM that
  // arrives while the worker starts, or the moment it says it runs, must close the session (and drain
  // the loops) like any other, not kill the process with tasks held. A second one stops at once.
  const stopSignals = new StopSignals({
    onRepeat: (second) => {
      log.info(`${second} again: releasing running tasks now`);
      zkPlan.zk.close();
      process.exit(ExitCode.interrupted);
    },
  });
  try {
    await runConnectedWorker(zkPlan, log, stopSignals, {
      options,
      connect,
      parent,
      jobs,
      schedules,
      functions,
      alerts,
    });
  } finally {
    stopSignals.dispose();
  }
}

/**
 * The listeners POSTing plan events and failed job runs to the alert webhook, whose URL comes from
 * --alert-webhook (on the command line, which ps shows), --alert-webhook-file or
 * $ZK_PLAN_ALERT_WEBHOOK: one of them. Slack-style webhooks keep their secret in the URL's path:
 * messages name the URL's origin only.
 */
async function alertWebhookListeners(options: WorkerCommandOptions): Promise<AlertListeners> {
  const fromEnv = takeSecretEnv(ALERT_WEBHOOK_ENV);
  const sources = [
    ...(options.alertWebhook !== undefined ? ['--alert-webhook'] : []),
    ...(options.alertWebhookFile !== undefined ? ['--alert-webhook-file'] : []),
    ...(fromEnv !== undefined ? [ALERT_WEBHOOK_ENV] : []),
  ];
  if (sources.length > 1)
    throw new UsageError(
      `the alert webhook is given twice, by ${sources.join(' and ')}: keep one`,
      'ALERT_WEBHOOK_GIVEN_TWICE',
    );
  const [source] = sources;
  if (source === undefined) return {};
  const url =
    options.alertWebhook ??
    fromEnv ??
    (await readSecretFile(options.alertWebhookFile ?? '', '--alert-webhook-file'))
      .split(/\r?\n/)
      .map((line) => line.trim())
      .find((line) => line !== '' && !line.startsWith('#')) ??
    '';
  try {
    // The URL's origin only in their messages.
    return {
      plans: webhookListener(url.trim(), options.alertTimeoutMs),
      jobRuns: jobRunWebhook(url.trim(), options.alertTimeoutMs),
    };
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new UsageError(
        `${source}: ${error.message.replace(/^Invalid url: /, '')}`,
        'INVALID_ALERT_WEBHOOK',
      );
    throw error;
  }
}

/** The alert webhook's listeners, when one is given: of plan events, and of failed job runs. */
interface AlertListeners {
  readonly plans?: PlanEventListener;
  readonly jobRuns?: (body: JobRunWebhookBody) => Promise<void>;
}

/** What runWorker worked out from the command line before it connected. */
interface WorkerSetup {
  readonly options: WorkerCommandOptions;
  readonly connect: string;
  readonly parent: string | undefined;
  readonly jobs: string | undefined;
  readonly schedules: string | undefined;
  readonly functions: FunctionRegistry;
  readonly alerts: AlertListeners;
}

/** Starts the loops (and metrics, schedules, jobs), prints the start line, and stops cleanly on the first stop signal. */
async function runConnectedWorker(
  zkPlan: ZkPlan,
  log: WorkerLog,
  stopSignals: StopSignals,
  setup: WorkerSetup,
): Promise<void> {
  const { options, connect, parent, jobs, schedules, functions, alerts } = setup;
  const stopLogging = log.follow(zkPlan);
  let metrics: MetricsServer | undefined;
  const logSink = new FileLogSink(
    options.taskLogDir !== undefined ? { dir: options.taskLogDir } : {},
  );
  let logServer: LogServer | undefined;
  try {
    if (options.taskLogPort !== undefined)
      logServer = await startLogServer(logSink, {
        port: options.taskLogPort,
        host: options.taskLogHost,
      });
  } catch (error) {
    stopLogging();
    await zkPlan.close();
    throw new UsageError(
      `--task-log-port ${options.taskLogPort}: cannot serve task logs on ${options.taskLogHost}: ${(error as Error).message}`,
    );
  }
  try {
    if (options.metricsPort !== undefined) {
      const { startMetricsServer } = await import('../../observability/metrics.js'); // loaded when used: faster start-up of the other commands
      metrics = await startMetricsServer(zkPlan, {
        port: options.metricsPort,
        host: options.metricsHost,
      });
    }
  } catch (error) {
    stopLogging();
    await zkPlan.close();
    throw new UsageError(
      `--metrics-port ${options.metricsPort}: cannot serve metrics on ${options.metricsHost}: ${(error as Error).message}`,
    );
  }
  // The pool creates its parent when it is missing; a typo in --parent would then go unseen, the
  // worker waiting for ever under a path nobody writes plans to.
  const parentIsNew = parent !== undefined && (await zkPlan.zk.exists(parent)) === undefined;
  const pool =
    parent === undefined
      ? undefined
      : zkPlan.startWorkers(parent, {
          count: options.workers,
          allowInline: options.allowInline,
          allowShell: options.allowShell,
          ...(options.shellKillGraceMs !== undefined
            ? { shellKillGraceMs: options.shellKillGraceMs }
            : {}),
          taskLogs: {
            captureConsole: options.taskLogCapture,
            echo: options.taskLogEcho,
            sink: logSink,
          },
          ...(options.drainTimeoutMs !== undefined
            ? { drainTimeoutMs: options.drainTimeoutMs }
            : {}),
          retention: options.retention && {
            ...(options.retentionMaxAgeMs !== undefined
              ? { maxAgeMs: options.retentionMaxAgeMs }
              : {}),
            ...(options.retentionMaxCount !== undefined
              ? { maxCount: options.retentionMaxCount }
              : {}),
          },
        });
  if (alerts.plans !== undefined && parent !== undefined) {
    zkPlan.alerts.subscribe(parent, alerts.plans, {
      onError: (error, eventId) => logUndeliveredAlert(log, error, eventId),
    });
  }
  const jobRunAlerts =
    alerts.jobRuns !== undefined && jobs !== undefined
      ? forwardJobRunFailures(zkPlan, alerts.jobRuns, {
          onError: (error, runId) => logUndeliveredAlert(log, error, runId),
        })
      : undefined;
  if (schedules !== undefined) zkPlan.startScheduler(schedules);
  const jobWorker =
    jobs === undefined
      ? undefined
      : zkPlan.startJobWorker(
          jobs,
          options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs },
        );
  const names = [...functions.names(), ...functions.jobNames()];
  const loops = pool?.size ?? 0;
  if (options.json) {
    const extra = {
      ...(metrics ? { metrics: metrics.url } : {}),
      ...(logServer ? { taskLogs: logServer.url } : {}),
      ...(schedules ? { schedules } : {}),
      ...(jobWorker ? { jobs, jobWorker: jobWorker.id } : {}),
      ...(options.allowShell ? { allowShell: true } : {}),
    };
    printJsonLine({
      event: 'started',
      loops,
      parent,
      ...(parentIsNew ? { parentCreated: true } : {}),
      connect,
      functions: names,
      pid: process.pid,
      ...extra,
    });
  } else {
    const extra = `${metrics ? `, metrics at ${metrics.url}` : ''}${logServer ? `, task logs at ${logServer.url}/logs/` : ''}${schedules ? `, firing schedules under ${schedules}` : ''}${jobWorker ? `, job worker ${jobWorker.id} on ${jobs}` : ''}`;
    const shell = options.allowShell ? ' (and shell tasks)' : '';
    print(
      `zk-plan worker: ${loops} loop(s) on ${parent ?? '(no plans)'} at ${connect}, functions: ${names.join(', ')}${shell}${extra}`,
    );
  }
  if (parentIsNew)
    log.warn(
      `${parent} did not exist: created it, and waiting for plans under this new, empty parent (is the path right? zk-plan plans <parent> lists a parent's plans)`,
    );
  const signal = await stopSignals.first;
  log.info(
    `${signal}: stopping (running: ${pool?.runningTasks.length ?? 0}${jobWorker ? `, job items: ${Object.values(jobWorker.held()).flat().length}` : ''})`,
  );
  await zkPlan.close();
  await jobRunAlerts?.stop(); // after the job worker's runs have ended: their failures are handed on first
  await metrics?.close();
  await logServer?.close();
  log.info('stopped');
  stopLogging();
  log.flush();
}
