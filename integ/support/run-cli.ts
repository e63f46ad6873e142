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
 * blocking this process (its worker pools go on meanwhile).
 */
export async function runCli(connectString: string, args: readonly string[]): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ZOOKEEPER_CONNECT: connectString } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}
