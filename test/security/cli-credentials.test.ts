/**
 * The CLI's credentials and ACL options (src/cli/credentials.ts) without a server: the formats,
 * the refusals and their coded messages, which never quote a secret. The commands against a real
 * server: integ/security/cli-auth.integ.test.ts.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  parseAcl,
  parseAuth,
  readSecretFile,
  resolveCliSecurity,
  takeSecretEnv,
} from '../../src/cli/credentials.js';
import { CliError, ExitCode, describeError } from '../../src/cli/exit-codes.js';
import { buildProgram } from '../../src/cli/program.js';
import { digestId, type ZkAuth } from '../../src/zk/acl.js';

const PASSWORD = 'hunter2-s3cret';
const alice: ZkAuth[] = [{ scheme: 'digest', id: `alice:${PASSWORD}` }];

/** The CliError `run` throws (synchronously or not). */
async function refusal(run: () => unknown): Promise<CliError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected a refusal');
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-credentials-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env['ZK_PLAN_AUTH'];
});

describe('credentials (ZK_PLAN_AUTH, --auth-file)', () => {
  it('are scheme:id lines as addauth takes them; comments, blank lines and surrounding blanks are skipped', () => {
    expect(parseAuth(`digest:alice:${PASSWORD}`, 'ZK_PLAN_AUTH')).toEqual(alice);
    expect(parseAuth(`# ops\n\n  digest:alice:${PASSWORD}  \r\nip:10.0.0.1\n`, 'f')).toEqual([
      ...alice,
      { scheme: 'ip', id: '10.0.0.1' },
    ]);
    expect(parseAuth('digest:bob:pa:ss:word', 'f')).toEqual([
      { scheme: 'digest', id: 'bob:pa:ss:word' },
    ]); // the password may hold colons
  });

  it('refuses a malformed line or no credential at all, naming the line and never quoting it', async () => {
    for (const [text, message] of [
      [
        `alice ${PASSWORD}`,
        /^ZK_PLAN_AUTH, line 1: expected scheme:id, such as digest:<user>:<password>$/,
      ],
      [
        `digest:${PASSWORD}`,
        /^ZK_PLAN_AUTH, line 1: a digest credential is digest:<user>:<password>$/,
      ],
      ['# nothing\n\n', /^ZK_PLAN_AUTH holds no credentials/],
    ] as const) {
      const error = await refusal(() => parseAuth(text, 'ZK_PLAN_AUTH'));
      expect(error).toMatchObject({ code: 'INVALID_AUTH', exitCode: ExitCode.usage });
      expect(error.message).toMatch(message);
      expect(describeError(error)).toMatch(/ \[INVALID_AUTH\]$/);
    }
  });

  it('a credentials file must be readable by its owner only, as ssh wants a private key', async () => {
    const file = join(dir, 'credentials');
    await writeFile(file, `digest:alice:${PASSWORD}\n`);
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      await chmod(file, mode);
      const error = await refusal(() => readSecretFile(file, '--auth-file (ZK_PLAN_AUTH_FILE)'));
      expect(error).toMatchObject({ code: 'INSECURE_SECRET_FILE', exitCode: ExitCode.usage });
      expect(error.message).toBe(
        `--auth-file (ZK_PLAN_AUTH_FILE): ${file} is open to its group or others (mode 0${mode.toString(8)}), and it holds a secret: run chmod 600 ${file}`,
      );
    }
    for (const mode of [0o600, 0o400]) {
      await chmod(file, mode);
      await expect(resolveCliSecurity({ authFile: file })).resolves.toEqual({ auth: alice });
    }
    const missing = await refusal(() =>
      readSecretFile(join(dir, 'none'), '--auth-file (ZK_PLAN_AUTH_FILE)'),
    );
    expect(missing).toMatchObject({ code: 'UNREADABLE_SECRET_FILE' });
    expect(missing.message).toMatch(/cannot read .*none: ENOENT$/);
  });

  it('ZK_PLAN_AUTH is removed from the environment once read, so that processes tasks start do not inherit it; given with a file too, it is refused', async () => {
    process.env['ZK_PLAN_AUTH'] = `digest:alice:${PASSWORD}`;
    expect(takeSecretEnv('ZK_PLAN_AUTH')).toBe(`digest:alice:${PASSWORD}`);
    expect(process.env['ZK_PLAN_AUTH']).toBeUndefined();
    expect(takeSecretEnv('ZK_PLAN_AUTH')).toBe(`digest:alice:${PASSWORD}`); // read again by a second connection of the command

    process.env['ZK_PLAN_AUTH'] = `digest:alice:${PASSWORD}`;
    const twice = await refusal(() => resolveCliSecurity({ authFile: join(dir, 'credentials') }));
    expect(twice).toMatchObject({ code: 'AUTH_GIVEN_TWICE' });
    expect(twice.message).toBe(
      'the credentials are given twice, in ZK_PLAN_AUTH and by --auth-file (ZK_PLAN_AUTH_FILE): keep one',
    );
    process.env['ZK_PLAN_AUTH'] = '';
    expect(takeSecretEnv('ZK_PLAN_AUTH')).toBeUndefined(); // set empty: none
  });
});

describe('the ACL (--acl, ZK_PLAN_ACL)', () => {
  const hashed = digestId(`alice:${PASSWORD}`);

  it('is open, creator, or scheme:id:perms entries in zkCli syntax, with the digest id hashed', () => {
    expect(parseAcl('open', [])).toEqual([{ perms: ['all'], scheme: 'world', id: 'anyone' }]);
    expect(parseAcl('creator', alice)).toEqual([
      { perms: ['create', 'delete', 'read', 'write', 'admin'], scheme: 'auth', id: '' },
    ]);
    expect(parseAcl(`digest:${hashed}:cdrwa, world:anyone:r`, alice)).toEqual([
      { perms: ['create', 'delete', 'read', 'write', 'admin'], scheme: 'digest', id: hashed },
      { perms: ['read'], scheme: 'world', id: 'anyone' },
    ]);
    expect(parseAcl('creator,ip:10.0.0.0/8:r', alice)).toHaveLength(2);
  });

  it('refuses, in CLI terms and with code INVALID_ACL, what ZooKeeper would refuse or what would lock the command out of its own nodes', async () => {
    const cases: [string, readonly ZkAuth[], RegExp][] = [
      [
        `digest:alice:${PASSWORD}:cdrwa`,
        alice,
        /entry 1 \(digest\): a digest id is <user>:<base64 of the SHA-1 of user:password>, never the password itself/,
      ],
      [
        `digest:alice:${PASSWORD}`,
        alice,
        /entry 1 \(digest\): the permissions are letters of cdrwa/,
      ],
      ['world:anyone:rx', [], /entry 1 \(world\): the permissions are letters of cdrwa/],
      ['world:everyone:r', [], /entry 1 \(world\): the only world id is anyone/],
      [
        'creator',
        [],
        /entry 1 \(creator\): grants every permission .* but it has no credentials: set ZK_PLAN_AUTH=digest:<user>:<password>, or --auth-file/,
      ],
      [`open,${PASSWORD}`, alice, /entry 2: expected open, creator or scheme:id:perms/],
      [
        `digest:${hashed}:cdrwa`,
        [{ scheme: 'digest', id: `bob:${PASSWORD}` }],
        /does not grant the command's credentials \(digest user 'bob'\) read, create and delete/,
      ],
      [
        'world:anyone:r',
        alice,
        /does not grant the command's credentials \(digest user 'alice'\) read, create and delete/,
      ],
      [' , ', alice, /is empty/],
    ];
    for (const [text, auth, message] of cases) {
      const error = await refusal(() => parseAcl(text, auth));
      expect(error, text).toMatchObject({ code: 'INVALID_ACL', exitCode: ExitCode.usage });
      expect(error.message, text).toMatch(/^--acl \(ZK_PLAN_ACL\)/);
      expect(error.message, text).toMatch(message);
      expect(error.message, text).not.toContain(PASSWORD);
      expect(error.message, text).not.toMatch(/digestAcl|auth: \{|acl\[/); // not the API's words
    }
  });
});

describe('the command line', () => {
  /** Every command with --connect, subcommands included. */
  function connectingCommands(command: Command): Command[] {
    const own = command.options.some((option) => option.long === '--connect') ? [command] : [];
    return [...own, ...command.commands.flatMap(connectingCommands)];
  }

  it('every command that connects takes --auth-file and --acl, and none takes a credential on argv', () => {
    const commands = connectingCommands(buildProgram());
    expect(commands.map((command) => command.name())).toEqual(
      expect.arrayContaining(['worker', 'ui', 'submit', 'show', 'plans', 'wait', 'ls', 'put']),
    );
    expect(commands.length).toBeGreaterThan(25);
    for (const command of commands) {
      const longs = command.options.map((option) => option.long);
      expect(longs, command.name()).toEqual(expect.arrayContaining(['--auth-file', '--acl']));
      expect(
        longs.filter((long) => /auth|password|secret|credential/.test(long ?? '')),
        command.name(),
      ).toEqual(['--auth-file']);
      const help = command.helpInformation().replace(/\s+/g, ' '); // unwrapped
      expect(help).toContain('$ZK_PLAN_AUTH');
      expect(help).toContain('(env: ZK_PLAN_AUTH_FILE)');
      expect(help).toContain('(env: ZK_PLAN_ACL)');
    }
  });

  it('--help shows no credential, even one in the environment', () => {
    process.env['ZK_PLAN_AUTH'] = `digest:alice:${PASSWORD}`;
    const program = buildProgram();
    const help = [
      program.helpInformation(),
      ...connectingCommands(program).map((command) => command.helpInformation()),
    ].join('\n');
    expect(help).not.toContain(PASSWORD);
  });
});
