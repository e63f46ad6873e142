import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { DEFAULTS } from '../../config/defaults.js';
import type { TaskLogAttempt } from '../../logs/attempt-log-record.js';
import { logLineText, tryHeader } from '../../logs/log-text.js';
import type { ZkPlan } from '../../zk-plan.js';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { resolveTaskArgument, taskArgument } from '../task-argument.js';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';
import { addConnectionOptions, type ConnectionOptions } from '../options.js';
import { print, printJson, printJsonLine, shortName } from '../output.js';

interface LogsOptions extends ConnectionOptions {
  readonly attempt?: string;
  readonly follow: boolean;
  readonly full: boolean;
}

/** `zk-plan logs <task | plan key>`: a task's log, as kept in ZooKeeper (or whole, from this host's file sink), or followed live. */
export function registerLogs(program: Command): void {
  const logs = program
    .command('logs')
    .description(
      "print a task's log: each try's last lines as kept in ZooKeeper (while it runs and after), or follow it live",
    )
    .argument(
      '<path>',
      'a task path (/plans/plan-0000000003/task-0000000007), or a plan path followed by a task key',
    )
    .argument('[key]', "the task's key in its plan (a spec's key, or the key it was added with)")
    .option('--attempt <n>', 'only the tries of attempt n (1 for the first)')
    .option(
      '-f, --follow',
      'print lines as they are written, until the task is done (Ctrl-C stops)',
      false,
    )
    .option(
      '--full',
      "print the whole log from the worker's log files instead of the tail kept in ZooKeeper (on the worker's host)",
      false,
    );
  addConnectionOptions(logs, DEFAULTS.cliConnectTimeoutMs.read);
  logs.addHelpText(
    'after',
    `\nZooKeeper keeps each try's last lines (8 KiB by default); a try that was cut says how many lines it lost.
The whole log is in the worker's log files; --full reads them when run on that worker's host.
--json prints the tries as taskLog returns them; with --follow, one JSON line per log line.`,
  );
  withUsageHint(logs);
  setAction(logs, async (path: string, key: string | undefined, options: LogsOptions) => {
    const argument = taskArgument(path, key);
    const attempt = parseAttempt(options.attempt);
    if (options.follow && options.full)
      throw new UsageError(
        '--follow and --full cannot be combined: --follow reads the tail kept in ZooKeeper',
      );
    await withZkPlan(options, async (zkPlan) => {
      const task = await resolveTaskArgument(zkPlan, argument);
      if (options.follow) await followTask(zkPlan, task, attempt, options.json);
      else if (options.full)
        await printFullLog(
          await zkPlan.logs.read(task, attempt === undefined ? {} : { attempt }),
          task,
        );
      else
        printTries(
          await zkPlan.logs.read(task, attempt === undefined ? {} : { attempt }),
          task,
          options.json,
        );
    });
  });
}

function parseAttempt(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < 1)
    throw new UsageError(`--attempt must be a whole number ≥ 1, got '${text}'`);
  return value;
}

function printTries(tries: readonly TaskLogAttempt[], task: string, json: boolean): void {
  if (json) {
    printJson(tries);
    return;
  }
  if (tries.length === 0) {
    print(
      `${shortName(task)}: no log kept (it has not logged a line yet, or its worker keeps no task logs)`,
    );
    return;
  }
  for (const record of tries) {
    print(tryHeader(record));
    for (const line of record.lines) print(logLineText(line));
  }
}

async function followTask(
  zkPlan: ZkPlan,
  task: string,
  attempt: number | undefined,
  json: boolean,
): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    for await (const line of zkPlan.logs.follow(task, { signal: interrupt.signal })) {
      if (attempt !== undefined && line.attempt !== attempt) continue;
      if (json) printJsonLine(line);
      else print(`#${line.attempt} ${logLineText(line)}`);
    }
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/** The whole log of each try: from its worker's log server when it serves it, else from the file sink when its files are on this host. */
async function printFullLog(tries: readonly TaskLogAttempt[], task: string): Promise<void> {
  if (tries.length === 0)
    throw new CliError(
      `${shortName(task)}: no log kept, so no file is known`,
      ExitCode.notFound,
      'TASK_LOG_NOT_FOUND',
    );
  const here = hostname();
  for (const record of tries) {
    print(tryHeader(record));
    const full = record.fullLog;
    if (full === undefined) {
      print('   (its worker keeps no log files: the lines above are all there is)');
      for (const line of record.lines) print(logLineText(line));
      continue;
    }
    if (full.url !== undefined) {
      const served = await readServedLog(full.url);
      if (served !== undefined) {
        for (const entry of served.split('\n'))
          if (entry.trim() !== '') print(formatFileLine(entry));
        continue;
      }
    }
    if (full.host !== here)
      throw new CliError(
        full.url !== undefined
          ? `the whole log of attempt ${record.attempt} was served at ${full.url}, which does not answer (its worker stopped?); it is on host ${full.host} in ${full.location}`
          : `the whole log of attempt ${record.attempt} is on host ${full.host} in ${full.location}: run zk-plan logs --full there, or start workers with --task-log-port to serve it`,
        ExitCode.notFound,
        'TASK_LOG_ELSEWHERE',
      );
    const text = await readFile(full.location, 'utf8').catch(() => undefined);
    if (text === undefined)
      throw new CliError(
        `${full.location} is gone (pruned with its plan, or removed): the tail kept in ZooKeeper is what is left (zk-plan logs without --full)`,
        ExitCode.notFound,
        'TASK_LOG_FILE_GONE',
      );
    for (const entry of text.split('\n')) if (entry.trim() !== '') print(formatFileLine(entry));
  }
}

/** The most of a served log read: twice the file sink's default cap per try. The URL comes from ZooKeeper, where anyone who may write could point it at an endless answer. */
const MAX_SERVED_LOG_BYTES = 32 * 1024 * 1024;

/** The whole log as its worker serves it (startLogServer), undefined when the server does not answer with it. */
async function readServedLog(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000), redirect: 'error' });
    if (!response.ok || response.body === null) return undefined;
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of response.body) {
      bytes += chunk.length;
      if (bytes > MAX_SERVED_LOG_BYTES)
        throw new CliError(
          `${url} answered more than ${MAX_SERVED_LOG_BYTES} bytes: not a log zk-plan serves`,
          ExitCode.failed,
          'TASK_LOG_TOO_LARGE',
        );
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    return undefined;
  }
}

function formatFileLine(entry: string): string {
  try {
    const parsed = JSON.parse(entry) as {
      time?: unknown;
      level?: unknown;
      msg?: unknown;
      fields?: unknown;
    };
    const fields = parsed.fields === undefined ? '' : ` ${JSON.stringify(parsed.fields)}`;
    return `${String(parsed.time)} ${String(parsed.level).toUpperCase().padEnd(5)} ${String(parsed.msg)}${fields}`;
  } catch {
    return entry;
  }
}
