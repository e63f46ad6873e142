/**
 * ZooKeeper credentials and ACLs of the CLI, the same for every command that connects
 * (src/cli/connection.ts applies them), and the secret files and variables they and the alert
 * webhook come from.
 *
 * Secrets never come from the command line, which `ps` shows to every user of the machine:
 *
 * - credentials come from `ZK_PLAN_AUTH` or from a file (`--auth-file <path>` or `ZK_PLAN_AUTH_FILE`),
 *   one `scheme:id` a line as ZooKeeper's `addauth` takes them, `digest:user:password`;
 * - a file holding a secret is refused, as ssh refuses a private key, when its group or others have
 *   any permission on it (`chmod 600`);
 * - an ACL holds no secret: `open`, `creator` (every permission for the identities the command
 *   authenticated as, ZooKeeper's CREATOR_ALL_ACL) or `scheme:id:perms` entries in zkCli's `setAcl`
 *   syntax, where a digest id is the hashed one (`digest:user:<base64 sha1>:cdrwa`).
 *
 * Messages never quote a credential, an ACL entry's id or a secret file's content: they name the
 * variable or option, the line or entry, the scheme, and for digest the user.
 */
import { readFile, stat } from 'node:fs/promises';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import { resolveAcl, type AclEntry, type AclPermName, type ZkAuth } from '../zk/acl.js';
import { CliError, ExitCode } from './exit-codes.js';

/** Credentials, one `scheme:id` a line (`digest:user:password`). */
export const AUTH_ENV = 'ZK_PLAN_AUTH';
/** A file holding the credentials (the default of --auth-file). */
export const AUTH_FILE_ENV = 'ZK_PLAN_AUTH_FILE';
/** The ACL of the nodes the command creates (the default of --acl). */
export const ACL_ENV = 'ZK_PLAN_ACL';
/** The URL of `zk-plan worker`'s alert webhook (instead of --alert-webhook, which ps shows). */
export const ALERT_WEBHOOK_ENV = 'ZK_PLAN_ALERT_WEBHOOK';

/** Where the credentials came from, as messages name it. */
const AUTH_FILE_SOURCE = `--auth-file (${AUTH_FILE_ENV})`;
const ACL_SOURCE = `--acl (${ACL_ENV})`;
const HOW_TO_AUTHENTICATE = `set ${AUTH_ENV}=digest:<user>:<password>, or --auth-file (${AUTH_FILE_ENV}) naming a file that holds that line`;

/** Codes of the errors of this file (printed as `[CODE]`, and the `code` of the --json error document). */
export const CredentialErrorCode = {
  /** A credential (or the file) is not `scheme:id`, or there is none. */
  invalidAuth: 'INVALID_AUTH',
  /** Both ZK_PLAN_AUTH and a credentials file are given. */
  authTwice: 'AUTH_GIVEN_TWICE',
  /** The ACL option is malformed, or would not let the command use the nodes it creates. */
  invalidAcl: 'INVALID_ACL',
  /** A file holding a secret may be read (or written) by its group or others. */
  insecureFile: 'INSECURE_SECRET_FILE',
  /** A file holding a secret cannot be read. */
  unreadableFile: 'UNREADABLE_SECRET_FILE',
} as const;

/** A bad credential, ACL or secret file: exit 2 as a bad command line, but without the command's usage, which has nothing to say about it. */
function configError(message: string, code: string): CliError {
  return new CliError(message, ExitCode.usage, code);
}

/** The values of secret variables this process read (and removed from its environment), by name. */
const takenSecrets = new Map<string, string>();

/**
 * The value of the secret environment variable `name` (undefined when unset or empty), removed
 * from this process's environment once read: processes that task functions start do not inherit
 * it. Read again, it is the value read first (unless the variable was set again since).
 */
export function takeSecretEnv(name: string): string | undefined {
  const value = process.env[name];
  if (value !== undefined) {
    takenSecrets.set(name, value);
    delete process.env[name];
  }
  const taken = takenSecrets.get(name);
  return taken === undefined || taken === '' ? undefined : taken;
}

/**
 * The content of a file holding a secret (`source` names the option, for messages). Refused when
 * its group or others have any permission on it (as ssh refuses such a private key): `chmod 600`.
 * The file may be a symbolic link (a Kubernetes secret volume's are): the mode checked is its target's.
 */
export async function readSecretFile(path: string, source: string): Promise<string> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    throw configError(
      `${source}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      CredentialErrorCode.unreadableFile,
    );
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw configError(
      `${source}: ${path} is open to its group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}), and it holds a secret: run chmod 600 ${path}`,
      CredentialErrorCode.insecureFile,
    );
  }
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw configError(
      `${source}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      CredentialErrorCode.unreadableFile,
    );
  }
}

/**
 * Credentials, one `scheme:id` a line (`digest:user:password`, as `addauth digest user:password`);
 * blank lines and lines starting with `#` are skipped, blanks around a line ignored. `source`
 * names where the text came from. Never quotes a line.
 */
export function parseAuth(text: string, source: string): ZkAuth[] {
  const auth: ZkAuth[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `${source}, line ${index + 1}`;
    const match = /^([A-Za-z0-9_.-]+):(.*)$/.exec(line);
    if (!match)
      throw configError(
        `${where}: expected scheme:id, such as digest:<user>:<password>`,
        CredentialErrorCode.invalidAuth,
      );
    const [, scheme = '', id = ''] = match;
    if (scheme === 'digest' && id.indexOf(':') < 1)
      throw configError(
        `${where}: a digest credential is digest:<user>:<password>`,
        CredentialErrorCode.invalidAuth,
      );
    auth.push({ scheme, id });
  });
  if (auth.length === 0)
    throw configError(
      `${source} holds no credentials (one scheme:id a line, such as digest:<user>:<password>)`,
      CredentialErrorCode.invalidAuth,
    );
  return auth;
}

/** `user` of a digest credential, or the scheme: how messages name an identity without its secret. */
export function describeAuth(auth: readonly ZkAuth[]): string {
  return auth
    .map((entry) =>
      entry.scheme === 'digest'
        ? `digest user '${entry.id.slice(0, entry.id.indexOf(':'))}'`
        : `scheme '${entry.scheme}'`,
    )
    .join(', ');
}

const PERM_LETTERS: Readonly<Record<string, AclPermName>> = {
  c: 'create',
  d: 'delete',
  r: 'read',
  w: 'write',
  a: 'admin',
};
const ALL: readonly AclPermName[] = ['all'];
/** zkCli's digest id: the user, a colon, base64 of a SHA-1 (28 characters). */
const DIGEST_ID = /^[^:]+:[A-Za-z0-9+/]{27}=$/;

/**
 * An ACL as --acl and ZK_PLAN_ACL take it: `open` (anyone may do anything: what nodes get without
 * it), `creator` (every permission for the identities the command authenticated as), or entries
 * `scheme:id:perms` separated by commas, as zkCli's `setAcl` takes them (`world:anyone:r`,
 * `digest:<user>:<base64 sha1 of user:password>:cdrwa`, `ip:10.0.0.0/8:r`, `auth::cdrwa`), which
 * may include `open` and `creator` too. Perms are letters of `cdrwa`. Checked against `auth`: the
 * ACL must let the command read the nodes it creates and create and delete their children.
 */
export function parseAcl(text: string, auth: readonly ZkAuth[], source = ACL_SOURCE): AclEntry[] {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0)
    throw configError(
      `${source} is empty: expected open, creator or scheme:id:perms entries`,
      CredentialErrorCode.invalidAcl,
    );
  const entries = items.map((item, index) =>
    parseAclEntry(item, `${source}, entry ${index + 1}`, auth),
  );
  try {
    resolveAcl(entries, auth); // the library's own check: the ACL leaves the command able to use its own nodes
  } catch (error) {
    if (!(error instanceof InvalidArgumentError)) throw error;
    const who =
      auth.length === 0
        ? 'the command, which has no credentials'
        : `the command's credentials (${describeAuth(auth)})`;
    throw configError(
      `${source} does not grant ${who} read, create and delete on the nodes it creates, so it could not use them: ` +
        `use --acl creator${auth.length === 0 ? ` and ${HOW_TO_AUTHENTICATE}` : ', or add an entry for the same user'}`,
      CredentialErrorCode.invalidAcl,
    );
  }
  return entries;
}

/** One ACL entry (`where` names it in messages, which never quote its id or perms: a mistaken entry may hold a password). */
function parseAclEntry(item: string, where: string, auth: readonly ZkAuth[]): AclEntry {
  if (item === 'open') return { perms: ALL, scheme: 'world', id: 'anyone' };
  const first = item.indexOf(':');
  const last = item.lastIndexOf(':');
  const entry =
    item === 'creator'
      ? { scheme: 'auth', id: '', letters: 'cdrwa' }
      : first > 0 && last > first
        ? {
            scheme: item.slice(0, first),
            id: item.slice(first + 1, last),
            letters: item.slice(last + 1),
          }
        : undefined;
  if (entry === undefined) {
    throw configError(
      `${where}: expected open, creator or scheme:id:perms, such as world:anyone:r or digest:<user>:<hash>:cdrwa`,
      CredentialErrorCode.invalidAcl,
    );
  }
  const named = `${where} (${item === 'creator' ? item : /^[A-Za-z0-9_.-]+$/.test(entry.scheme) ? entry.scheme : 'its scheme'})`;
  const perms = [...entry.letters].map((letter) => PERM_LETTERS[letter]);
  if (perms.length === 0 || perms.some((perm) => perm === undefined)) {
    throw configError(
      `${named}: the permissions are letters of cdrwa (create, delete, read, write, admin), after the last colon`,
      CredentialErrorCode.invalidAcl,
    );
  }
  if (entry.scheme === 'world' && entry.id !== 'anyone')
    throw configError(`${named}: the only world id is anyone`, CredentialErrorCode.invalidAcl);
  if (entry.scheme === 'digest' && !DIGEST_ID.test(entry.id)) {
    throw configError(
      `${named}: a digest id is <user>:<base64 of the SHA-1 of user:password>, never the password itself ` +
        `(printf %s 'user:password' | openssl dgst -binary -sha1 | openssl base64); --acl creator gives the credentials' own user every permission`,
      CredentialErrorCode.invalidAcl,
    );
  }
  if (entry.scheme === 'auth' && auth.length === 0) {
    throw configError(
      `${named}: grants every permission to the identities the command authenticated as, but it has no credentials: ${HOW_TO_AUTHENTICATE}`,
      CredentialErrorCode.invalidAcl,
    );
  }
  return { perms: perms as AclPermName[], scheme: entry.scheme, id: entry.id };
}

/** What the connection options say about credentials and ACL, checked. */
export interface CliSecurity {
  readonly auth: readonly ZkAuth[];
  readonly acl?: readonly AclEntry[];
}

/**
 * The credentials (ZK_PLAN_AUTH, or the file of --auth-file / ZK_PLAN_AUTH_FILE: one of them) and
 * the ACL (--acl / ZK_PLAN_ACL) of a command's connection.
 */
export async function resolveCliSecurity(options: {
  readonly authFile?: string | undefined;
  readonly acl?: string | undefined;
}): Promise<CliSecurity> {
  const inline = takeSecretEnv(AUTH_ENV);
  const authFile = options.authFile?.trim() || undefined;
  if (inline !== undefined && authFile !== undefined) {
    throw configError(
      `the credentials are given twice, in ${AUTH_ENV} and by ${AUTH_FILE_SOURCE}: keep one`,
      CredentialErrorCode.authTwice,
    );
  }
  const auth =
    inline !== undefined
      ? parseAuth(inline, AUTH_ENV)
      : authFile !== undefined
        ? parseAuth(await readSecretFile(authFile, AUTH_FILE_SOURCE), AUTH_FILE_SOURCE)
        : [];
  const aclText = options.acl?.trim() || undefined;
  return aclText === undefined ? { auth } : { auth, acl: parseAcl(aclText, auth) };
}
