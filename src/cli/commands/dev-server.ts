import { Option, type Command } from 'commander';
import { PortInUseError } from '../../errors/server-errors.js';
import { startZooKeeper, type ZooKeeperServer } from '../../local-zookeeper/zookeeper-server.js';
import { setAction, withUsageHint } from '../action.js';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';
import { integer } from '../options.js';
import { print, printError, printJson } from '../output.js';
import { StopSignals } from '../stop-signals.js';

interface DevServerOptions {
  readonly port?: number;
  readonly json: boolean;
}

/** `zk-plan dev-server`: a local ZooKeeper for development. */
export function registerDevServer(program: Command): void {
  const command = program
    .command('dev-server')
    .description(
      'start a local ZooKeeper on 127.0.0.1, print its connect string, stop it on SIGTERM or SIGINT',
    )
    .addOption(
      new Option(
        '--port <port>',
        'client port to listen on (without it: a free port, picked at start and printed)',
      ).argParser(integer(1, 65_535)),
    )
    .addOption(
      new Option(
        '--json',
        'print { connect, pid, logFile } as JSON instead of the bare connect string',
      ).default(false),
    );
  command.addHelpText(
    'after',
    `
Prints the connect string on stdout (127.0.0.1:<port>), and on stderr a line to paste into the
shells that run the other commands:
  export ZOOKEEPER_CONNECT=127.0.0.1:<port>
The data lives in a temporary directory, removed when the server stops.`,
  );
  withUsageHint(command);
  setAction(command, async (options: DevServerOptions) => {
    let server: ZooKeeperServer;
    try {
      // A failed start removes the temporary data dir (the error carries the log's tail).
      server = await startZooKeeper({
        ...(options.port === undefined ? {} : { port: options.port }),
        keepDataDirOnFailure: false,
      });
    } catch (error) {
      if (error instanceof PortInUseError) {
        throw new UsageError(
          `--port ${error.port}: 127.0.0.1:${error.port} is already in use (another ZooKeeper or another program listens there): stop it, choose another --port, or leave --port out to use a free port`,
        );
      }
      throw error;
    }
    // Listening before the connect string appears: a stop sent as soon as it is read stops the server and removes its data dir.
    const stopSignals = new StopSignals();
    if (options.json)
      printJson({ connect: server.connectString, pid: server.pid, logFile: server.logFile });
    else print(server.connectString);
    printError(
      `ZooKeeper serving on ${server.connectString} (pid ${server.pid}, log ${server.logFile}); stop with Ctrl-C`,
    );
    printError(
      `In the shells that run zk-plan:\n  export ZOOKEEPER_CONNECT=${server.connectString}`,
    );
    const ended = await Promise.race([
      stopSignals.first.then(() => undefined),
      server.whenExited(),
    ]);
    stopSignals.dispose();
    await server.stop(); // removes the data dir
    if (ended !== undefined)
      throw new CliError(
        `the ZooKeeper server on ${server.connectString} stopped on its own (${ended}); its data dir was removed`,
        ExitCode.failed,
      );
  });
}
