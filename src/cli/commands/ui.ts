import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import {
  addConnectionOptions,
  checkParentPath,
  integer,
  type ConnectionOptions,
} from '../options.js';
import { StopSignals } from '../stop-signals.js';
import { DEFAULTS } from '../../config/defaults.js';
import { print, printError, printJsonLine } from '../output.js';

interface UiOptions extends ConnectionOptions {
  readonly port: number;
  readonly host: string;
  readonly allowActions: boolean;
  readonly readOnly: boolean;
  readonly schedules?: string;
  readonly jobs?: string;
}

/** Where --allow-actions takes its bearer token from, when set (else one is made up and printed in the URL). */
const TOKEN_ENV = 'ZK_PLAN_UI_TOKEN';

/** `zk-plan ui <parent>`: the web view of the plans under a parent, until SIGTERM or SIGINT. */
export function registerUi(program: Command): void {
  const command = program
    .command('ui')
    .description(
      'serve the web view of the plans under a parent (live graphs), until SIGTERM or SIGINT',
    )
    .argument('<parent>', 'znode under which the plans are, e.g. /plans')
    .addOption(
      new Option('--port <port>', 'port to listen on (0: a free one)')
        .argParser(integer(0, 65_535))
        .default(0),
    )
    .addOption(
      new Option('--host <host>', 'loopback address to listen on').default(DEFAULTS.listenHost),
    )
    .addOption(
      new Option(
        '--schedules <path>',
        'also list the schedules under this parent, with their next fire times and runs',
      ),
    )
    .addOption(
      new Option(
        '--jobs <path>',
        "also list the jobs under this parent, with each job worker's items and their fencing tokens",
      ),
    )
    .addOption(
      new Option(
        '--allow-actions',
        `take actions (pause, resume, cancel, retry, rerun, trigger) only with a bearer token ($${TOKEN_ENV}, else a new one, printed in the URL's fragment): for a machine shared with other users, or a view reached through a tunnel or another name`,
      )
        .default(false)
        .conflicts('readOnly'),
    )
    .addOption(
      new Option(
        '--read-only',
        "refuse every action (without it, the view's own pages take them, checked by Host and Origin)",
      ).default(false),
    );
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText(
    'after',
    `\nPrints the view's URL on stdout (--json: { "url": …, "actions": "same-origin" | "token" | "off" }); with --allow-actions the URL ends in #token=<token>, which the page keeps for its buttons.`,
  );
  withUsageHint(command);
  setAction(command, async (parent: string, options: UiOptions) => {
    checkParentPath(parent);
    if (options.schedules !== undefined) checkParentPath(options.schedules);
    if (options.jobs !== undefined) checkParentPath(options.jobs);
    const { startUiServer } = await import('../../ui/ui-server.js'); // loaded when used: faster start-up of the other commands
    await withZkPlan(options, async (zkPlan) => {
      const token = options.allowActions
        ? process.env[TOKEN_ENV] || randomBytes(24).toString('base64url')
        : undefined;
      const ui = await startUiServer({
        zkPlan,
        parent,
        port: options.port,
        host: options.host,
        ...(token !== undefined ? { actionsToken: token } : {}),
        readOnly: options.readOnly,
        ...(options.schedules !== undefined ? { schedules: options.schedules } : {}),
        ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
      });
      // The token goes in the fragment, which browsers never send: the page reads it and keeps it for its requests.
      const url = token === undefined ? ui.url : `${ui.url}#token=${encodeURIComponent(token)}`;
      // Listening before the URL appears: a stop sent as soon as it is read closes the view instead of killing the process.
      const stopSignals = new StopSignals();
      const actions = options.readOnly ? 'off' : token !== undefined ? 'token' : 'same-origin';
      if (options.json) printJsonLine({ url, parent, actions });
      else print(url);
      printError(`zk-plan ui: plans under ${parent} at ${ui.url}; stop with Ctrl-C`);
      await stopSignals.first;
      stopSignals.dispose();
      await ui.close();
    });
  });
}
