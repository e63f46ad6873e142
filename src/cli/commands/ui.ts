import { Option, type Command } from 'commander';
import { setAction, withUsageHint } from '../action.js';
import { withZkPlan } from '../connection.js';
import { addConnectionOptions, checkParentPath, integer, type ConnectionOptions } from '../options.js';
import { untilSignal } from '../signals.js';
import { DEFAULTS } from '../../config/defaults.js';

interface UiOptions extends ConnectionOptions {
  readonly port: number;
  readonly host: string;
}

/** `zk-plan ui <parent>`: the web view of the plans under a parent, until SIGTERM or SIGINT. */
export function registerUi(program: Command): void {
  const command = program
    .command('ui')
    .description('serve the web view of the plans under a parent (live graphs), until SIGTERM or SIGINT')
    .argument('<parent>', 'znode under which the plans are, e.g. /plans')
    .addOption(new Option('--port <port>', 'port to listen on (0: a free one)').argParser(integer(0, 65_535)).default(0))
    .addOption(new Option('--host <host>', 'loopback address to listen on (the view has no authentication)').default('127.0.0.1'));
  addConnectionOptions(command, DEFAULTS.cliConnectTimeoutMs.read);
  command.addHelpText('after', `\nPrints the view's URL on stdout (--json: { "url": … }).`);
  withUsageHint(command);
  setAction(command, async (parent: string, options: UiOptions) => {
    checkParentPath(parent);
    const { startUiServer } = await import('../../ui/ui-server.js'); // loaded when used: faster start-up of the other commands
    await withZkPlan(options, async (zkPlan) => {
      const ui = await startUiServer({ zkPlan, parent, port: options.port, host: options.host });
      if (options.json) console.log(JSON.stringify({ url: ui.url, parent }));
      else console.log(ui.url);
      console.error(`zk-plan ui: plans under ${parent} at ${ui.url}; stop with Ctrl-C`);
      await untilSignal();
      await ui.close();
    });
  });
}
