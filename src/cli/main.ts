#!/usr/bin/env node
/**
 * The `zk-plan` command line: `worker` runs worker loops in this process, `dev-server` starts a
 * local ZooKeeper for development.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { once } from 'node:events';
import { ZkPlanError } from '../errors/base-error.js';
import { ZkPlan } from '../plan/zk-plan.js';
import { startZooKeeper } from '../server/zookeeper-server.js';
import { loadFunctions } from './load-functions.js';

const USAGE = `Usage:
  zk-plan worker --parent <path> --functions <module> [--connect <host:port,…>] [--workers <n>]
                 [--allow-inline] [--session-timeout-ms <ms>] [--drain-timeout-ms <ms>]
      Runs <n> worker loops (default 1) on every plan under <path> until SIGTERM or SIGINT,
      then stops taking tasks, lets running ones finish (or releases them) and closes the session.
      <module> exports \`functions\` or a default export: a FunctionRegistry or an object of functions.
  zk-plan dev-server [--port <port>]
      Starts a local ZooKeeper on 127.0.0.1 and prints its connect string; stops it on SIGTERM or SIGINT.

--connect defaults to $ZOOKEEPER_CONNECT.`;

class UsageError extends Error {}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'worker':
      return await runWorker(rest);
    case 'dev-server':
      return await runDevServer(rest);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

async function runWorker(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      connect: { type: 'string' },
      parent: { type: 'string' },
      functions: { type: 'string' },
      workers: { type: 'string', default: '1' },
      'allow-inline': { type: 'boolean', default: false },
      'session-timeout-ms': { type: 'string' },
      'drain-timeout-ms': { type: 'string' },
    },
  });
  const connect = values.connect ?? process.env['ZOOKEEPER_CONNECT'];
  if (!connect) throw new UsageError('--connect (or ZOOKEEPER_CONNECT) is required');
  if (!values.parent) throw new UsageError('--parent is required');
  if (!values.functions) throw new UsageError('--functions is required');
  const functions = await loadFunctions(values.functions);
  const zkPlan = await ZkPlan.connect({ connect, functions, sessionTimeoutMs: optionalNumber(values['session-timeout-ms']) });
  const pool = zkPlan.startWorkers(values.parent, {
    count: Number(values.workers),
    allowInline: values['allow-inline'],
    drainTimeoutMs: optionalNumber(values['drain-timeout-ms']),
  });
  zkPlan.on('task:failed', ({ task, workerId, error }) => console.error(`task failed: ${task} on ${workerId}: ${error.message}`));
  zkPlan.on('worker:error', ({ workerId, error }) => console.error(`worker error on ${workerId}: ${error.message}`));
  console.log(`zk-plan worker: ${pool.size} loop(s) on ${values.parent} at ${connect}, functions: ${functions.names().join(', ')}`);
  const signal = await untilSignal();
  console.log(`zk-plan worker: ${signal}: stopping (running: ${pool.runningTasks.length})`);
  await zkPlan.close();
  return 0;
}

async function runDevServer(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { port: { type: 'string' } } });
  const server = await startZooKeeper({ port: optionalNumber(values.port) });
  console.log(server.connectString);
  console.error(`ZooKeeper serving on ${server.connectString} (pid ${server.pid}, log ${server.logFile}); stop with Ctrl-C`);
  await untilSignal();
  await server.stop();
  return 0;
}

async function untilSignal(): Promise<string> {
  const controller = new AbortController();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  // The losers reject with AbortError once the race is decided; that is expected.
  const first = await Promise.race(signals.map((name) => once(process, name, { signal: controller.signal }).then(() => name, () => name)));
  controller.abort();
  return first;
}

function optionalNumber(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      console.error(`zk-plan: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof ZkPlanError) {
      console.error(`zk-plan: ${error.message} [${error.code}]`);
      process.exitCode = 1;
    } else {
      console.error('zk-plan:', error);
      process.exitCode = 1;
    }
  },
);
