import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** What a `zk-plan` command did. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `zk-plan <args>` (src/cli/main.ts under tsx) against `connectString` to the end, without
 * blocking this process (its worker pools go on meanwhile); `env` adds to (or, undefined, removes
 * from) its environment.
 */
export async function runCli(
  connectString: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: cliEnv(connectString, env),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The environment of a `zk-plan` process: this one's, ZOOKEEPER_CONNECT set, `env` applied (an undefined value removes the variable). */
export function cliEnv(
  connectString: string,
  env: Readonly<Record<string, string | undefined>> = {},
): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ZOOKEEPER_CONNECT: connectString };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}
