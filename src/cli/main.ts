#!/usr/bin/env node
/**
 * The `zk-plan` command line (commander): `worker` runs worker loops in this process; `plans`,
 * `show`, `wait`, `rm` and `retry` inspect and act on plans; `dev-server` starts a local
 * ZooKeeper for development. Exit codes: src/cli/exit-codes.ts (and `zk-plan --help`).
 */
import { runCli } from './program.js';

// A reader that went away (`zk-plan plans /p | head`) is no error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await runCli(process.argv.slice(2));
