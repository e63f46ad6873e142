/**
 * The command line with ZooKeeper credentials and ACLs, against a real server: credentials from a
 * file (ZK_PLAN_AUTH_FILE) or the environment (ZK_PLAN_AUTH), never argv; the ACL from
 * ZK_PLAN_ACL. A plan submitted so is protected, worked by `zk-plan worker` and shown by `zk-plan
 * show` with the same credentials; without them the CLI says NO_AUTH (exit 7); a credentials file
 * others may read is refused. Few processes (each costs about a second): the checks that need
 * none are in test/security/cli-credentials.test.ts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestId, type AclEntry, type PlanView } from '../../src/index.js';
import { layout } from '../../src/testing/index.js';
import { cliEnv, runCli, type CliRun } from '../support/run-cli.js';
import { TIMING, useZooKeeper, withDeadline } from '../support/zk-test-env.js';

const env = useZooKeeper('cli-auth');

const PASSWORD = 'Pa55-w0rd-in-a-file';
const CREDENTIAL = `digest:alice:${PASSWORD}`;
const aliceAuth = { scheme: 'digest', id: `alice:${PASSWORD}` };
/** The ACL ZooKeeper reports on every node created with ZK_PLAN_ACL=creator by alice. */
const aliceOnly: AclEntry[] = [{ perms: 31, scheme: 'digest', id: digestId(`alice:${PASSWORD}`) }];

let dir: string;
let credentials: string;
let openCredentials: string;
let spec: string;
let functions: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-cli-auth-'));
  credentials = join(dir, 'zk-credentials');
  await writeFile(credentials, `# alice, for the plans under /secure\n${CREDENTIAL}\n`, {
    mode: 0o600,
  });
  await chmod(credentials, 0o600); // whatever the umask
  openCredentials = join(dir, 'zk-credentials-0644');
  await writeFile(openCredentials, `${CREDENTIAL}\n`);
  await chmod(openCredentials, 0o644);
  spec = join(dir, 'spec.json');
  await writeFile(
    spec,
    JSON.stringify({
      tasks: {
        one: { fn: 'constant', params: [20] },
        two: { fn: 'plus', params: [1], inputs: ['one'] },
      },
    }),
  );
  functions = join(dir, 'tasks.mjs');
  await writeFile(
    functions,
    'export default { constant: (ctx) => ctx.params[0], plus: (ctx, x) => x + ctx.params[0] };\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Neither the password nor the credential line appears in what a command printed. */
function expectNoSecret(run: CliRun): void {
  expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
}

describe('zk-plan with ZooKeeper credentials and an ACL', () => {
  it('a plan submitted with credentials from a file is protected, worked by zk-plan worker and shown by zk-plan show; without them NO_AUTH', async () => {
    const parent = env.root();
    const fromFile = {
      ZK_PLAN_AUTH_FILE: credentials,
      ZK_PLAN_ACL: 'creator',
      ZK_PLAN_AUTH: undefined,
    };

    // Checked against the workers' module: none is running yet to vouch for the functions.
    const submitted = await runCli(
      env.connectString,
      ['submit', spec, '--parent', parent, '--functions', functions, '--json'],
      fromFile,
    );
    expectNoSecret(submitted);
    expect(submitted.code, submitted.stderr).toBe(0);
    const { plan, tasks } = JSON.parse(submitted.stdout) as {
      plan: string;
      tasks: Record<string, string>;
    };

    const alice = await env.zkPlan({ auth: aliceAuth });
    const two = tasks['two'] ?? '';
    for (const node of [parent, plan, tasks['one'] ?? '', two])
      expect((await alice.zk.getAcl(node)).acl, node).toEqual(aliceOnly);
    const anonymous = await env.client();
    await expect(anonymous.getChildren(plan)).rejects.toMatchObject({ code: 'NO_AUTH' });

    // The worker takes the credentials from the environment, the same ACL for what it writes.
    const worker = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'worker',
        '--parent',
        parent,
        '--functions',
        functions,
      ],
      {
        env: cliEnv(env.connectString, {
          ZK_PLAN_AUTH: CREDENTIAL,
          ZK_PLAN_ACL: 'creator',
          ZK_PLAN_AUTH_FILE: undefined,
        }),
      },
    );
    let workerOutput = '';
    worker.stdout.on('data', (chunk: Buffer) => (workerOutput += String(chunk)));
    worker.stderr.on('data', (chunk: Buffer) => (workerOutput += String(chunk)));
    const exited = once(worker, 'exit') as Promise<[number | null]>;
    try {
      await alice.waitForCompletion(plan, { timeoutMs: 20_000 * TIMING });
    } finally {
      worker.kill('SIGTERM');
    }
    const [workerCode] = await withDeadline(
      exited,
      10_000 * TIMING,
      () => `the worker did not stop on SIGTERM: ${workerOutput}`,
    );
    expect(workerCode, workerOutput).toBe(0);
    expect(workerOutput).not.toContain(PASSWORD);
    expect(await alice.getResult(two)).toBe(21);
    expect((await alice.zk.getAcl(layout.keptResultPathFor(two))).acl).toEqual(aliceOnly); // written by the worker's session

    const [shown, denied, refused] = await Promise.all([
      runCli(env.connectString, ['show', plan, '--json'], fromFile),
      runCli(env.connectString, ['show', plan], {
        ZK_PLAN_AUTH: undefined,
        ZK_PLAN_AUTH_FILE: undefined,
        ZK_PLAN_ACL: undefined,
      }),
      runCli(env.connectString, ['show', plan, '--json'], {
        ...fromFile,
        ZK_PLAN_AUTH_FILE: openCredentials,
      }),
    ]);
    for (const run of [shown, denied, refused]) expectNoSecret(run);

    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as PlanView).status.state).toBe('completed');

    expect(denied.code, denied.stderr).toBe(7);
    expect(denied.stdout).toBe('');
    expect(denied.stderr).toMatch(
      /^zk-plan: ZooKeeper refused \w+ of \/t-[^ ]+: the node's ACL does not admit this command, and it has no credentials: set ZK_PLAN_AUTH/,
    );
    expect(denied.stderr).toMatch(/\[NO_AUTH\]\n$/);

    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `${openCredentials} is open to its group or others (mode 0644)`,
    );
    expect(refused.stderr).toContain(`chmod 600 ${openCredentials}`);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      error: { code: 'INSECURE_SECRET_FILE', exitCode: 2 },
    });
  });
});
