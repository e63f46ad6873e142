import { createRequire } from 'node:module';
import { DEFAULTS } from '../config/defaults.js';
import { Command, CommanderError } from 'commander';
import { actionOutcome, usageHint } from './action.js';
import { registerControl } from './commands/control.js';
import { registerDevServer } from './commands/dev-server.js';
import { registerPlans } from './commands/plans.js';
import { registerRetry } from './commands/retry.js';
import { registerRm } from './commands/rm.js';
import { registerShow } from './commands/show.js';
import { registerUi } from './commands/ui.js';
import { registerWait } from './commands/wait.js';
import { registerWorker } from './commands/worker.js';
import { registerWorkers } from './commands/workers.js';
import { registerWhy } from './commands/why.js';
import { registerLogs } from './commands/logs.js';
import { registerSubmit } from './commands/submit.js';
import { registerSchedule } from './commands/schedule.js';
import { registerJobs } from './commands/jobs.js';
import { registerSnapshot } from './commands/snapshot.js';
import {
  EXIT_CODES_HELP,
  ExitCode,
  UsageError,
  describeError,
  exitCodeFor,
  type ExitCodeValue,
} from './exit-codes.js';
import { ALERT_WEBHOOK_ENV, AUTH_ENV, takeSecretEnv } from './credentials.js';
import { printError, printJson } from './output.js';
import { printable } from '../util/printable.js';

/** The `zk-plan` program: every command registered, commander's exits turned into exceptions. */
export function buildProgram(): Command {
  const program = new Command('zk-plan')
    .version(packageVersion(), '-V, --version')
    .description(
      'Run and inspect zk-plan plans: worker processes, plan listings, progress, retries.',
    )
    .exitOverride()
    .configureOutput({
      outputError: (text, write) => write(printable(`zk-plan: ${text.replace(/^error: /, '')}`)),
    })
    .showHelpAfterError("Run 'zk-plan --help' for the commands.")
    .addHelpText(
      'after',
      `
Every command that talks to ZooKeeper takes --connect (default: $ZOOKEEPER_CONNECT),
--connect-timeout-ms (${DEFAULTS.cliConnectTimeoutMs.worker} for worker, ${DEFAULTS.cliConnectTimeoutMs.read} for the others) and --json
(one JSON document on stdout). Plan paths are those zk-plan submit prints and zk-plan plans <parent>
lists: <parent>/plan-NNNNNNNNNN.

ZooKeeper credentials never go on the command line (ps shows it to everyone): put them in
$ZK_PLAN_AUTH, or in a file only its owner may read named by --auth-file or $ZK_PLAN_AUTH_FILE,
one scheme:id a line (digest:<user>:<password>). --acl (or $ZK_PLAN_ACL) sets the ACL of the nodes
a command creates: open (the default), creator (every permission for those credentials), or
scheme:id:perms entries (world:anyone:r, digest:<user>:<base64 sha1 of user:password>:cdrwa).

${EXIT_CODES_HELP}`,
    );
  registerWorker(program);
  registerPlans(program);
  registerShow(program);
  registerWait(program);
  registerRm(program);
  registerRetry(program);
  registerControl(program);
  registerWorkers(program);
  registerWhy(program);
  registerLogs(program);
  registerSubmit(program);
  registerSchedule(program);
  registerJobs(program);
  registerSnapshot(program);
  registerUi(program);
  registerDevServer(program);
  program.commands.forEach((command) => command.addHelpText('after', `\n${EXIT_CODES_HELP}`));
  return program;
}

/** The environment variables holding secrets (src/cli/credentials.ts). */
const SECRET_ENV = [AUTH_ENV, ALERT_WEBHOOK_ENV] as const;

/** Runs the command line `argv` (without node and the script); resolves with the exit code. Never rejects. */
export async function runCli(argv: readonly string[]): Promise<ExitCodeValue> {
  // Out of the environment before any code runs (a worker's functions module is imported before it
  // connects): processes started from here on do not inherit the secrets. Kept for the commands.
  for (const name of SECRET_ENV) takeSecretEnv(name);
  const program = buildProgram();
  const json = argv.includes('--json');
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return ExitCode.usage;
  }
  try {
    actionOutcome.exitCode = ExitCode.ok;
    await program.parseAsync([...argv], { from: 'user' });
    return actionOutcome.exitCode;
  } catch (error) {
    // commander has printed its own message (and the usage hint) already.
    if (error instanceof CommanderError) return exitCodeFor(error);
    const exitCode = exitCodeFor(error);
    printError(`zk-plan: ${describeError(error)}`);
    if (error instanceof UsageError && error.command) printError(usageHint(error.command));
    if (json) printJson({ error: errorDocument(error, exitCode) });
    return exitCode;
  }
}

/** The package's version (package.json sits two levels up from src/cli and from dist/cli). */
function packageVersion(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function errorDocument(error: unknown, exitCode: ExitCodeValue): Record<string, unknown> {
  const code =
    typeof error === 'object' && error !== null && 'code' in error && error.code !== undefined
      ? String(error.code)
      : exitCode === ExitCode.usage
        ? 'USAGE'
        : 'ERROR';
  const path =
    typeof error === 'object' && error !== null && 'path' in error && typeof error.path === 'string'
      ? { path: error.path }
      : {};
  return { code, message: describeError(error), exitCode, ...path };
}
