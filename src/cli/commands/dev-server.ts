import { Option, type Command } from 'commander';
import { startZooKeeper } from '../../server/zookeeper-server.js';
import { setAction, withUsageHint } from '../action.js';
import { integer } from '../options.js';
import { printJson } from '../output.js';
import { untilSignal } from '../signals.js';

interface DevServerOptions {
  readonly port?: number;
  readonly json: boolean;
}

/** `zk-plan dev-server`: a local ZooKeeper for development. */
export function registerDevServer(program: Command): void {
  const command = program
    .command('dev-server')
    .description('start a local ZooKeeper on 127.0.0.1, print its connect string, stop it on SIGTERM or SIGINT')
    .addOption(new Option('--port <port>', 'client port; default: a free one').argParser(integer(1, 65_535)))
    .addOption(new Option('--json', 'print { connect, pid, logFile } as JSON instead of the bare connect string').default(false));
  withUsageHint(command);
  setAction(command, async (options: DevServerOptions) => {
    const server = await startZooKeeper(options.port === undefined ? {} : { port: options.port });
    if (options.json) printJson({ connect: server.connectString, pid: server.pid, logFile: server.logFile });
    else console.log(server.connectString);
    console.error(`ZooKeeper serving on ${server.connectString} (pid ${server.pid}, log ${server.logFile}); stop with Ctrl-C`);
    await untilSignal();
    await server.stop();
  });
}
