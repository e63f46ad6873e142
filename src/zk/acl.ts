/**
 * ZooKeeper authentication and ACLs: the types of the `auth` and `acl` connect options, helpers
 * to build ACL entries, and their validation.
 */
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors/usage-errors.js';
import type { ZkAclEntry } from './native-client.js';

/**
 * A ZooKeeper permission by name; `all` is the five others together.
 *
 * @category Configuration
 */
export type AclPermName = 'read' | 'write' | 'create' | 'delete' | 'admin' | 'all';

/**
 * ZooKeeper's permission bits (ZOO_PERM_*).
 *
 * @category Configuration
 */
export const ACL_PERMS: Readonly<Record<AclPermName, number>> = Object.freeze({
  read: 1,
  write: 2,
  create: 4,
  delete: 8,
  admin: 16,
  all: 31,
});

/**
 * One ACL entry: `perms` granted to the identity `id` of `scheme`. For `digest`, `id` is
 * `user:` + base64(sha1(`user:password`)), which `digestAcl('user:password')` computes; for
 * `world`, `anyone`; for `auth` (whoever created the node), `''`; for `ip`, an address or CIDR.
 *
 * @category Configuration
 */
export interface AclEntry {
  readonly perms: number | readonly AclPermName[];
  readonly scheme: string;
  readonly id: string;
}

/**
 * Credentials added to a session (`add_auth`): for `digest`, `id` is `user:password` in clear.
 *
 * @category Configuration
 */
export interface ZkAuth {
  readonly scheme: string;
  readonly id: string;
}

/**
 * ZooKeeper's OPEN_ACL_UNSAFE: anyone may do anything (what nodes get without an `acl`).
 *
 * @category Configuration
 */
export const openAcl: readonly AclEntry[] = Object.freeze([
  Object.freeze({ perms: Object.freeze(['all'] as const), scheme: 'world', id: 'anyone' }),
]);

/**
 * ZooKeeper's CREATOR_ALL_ACL: every permission for the identities the creating session authenticated as (needs `auth`).
 *
 * @category Configuration
 */
export const creatorAllAcl: readonly AclEntry[] = Object.freeze([
  Object.freeze({ perms: Object.freeze(['all'] as const), scheme: 'auth', id: '' }),
]);

/**
 * The `digest` id of `user:password`, as ZooKeeper's DigestAuthenticationProvider computes it: `user:` + base64(sha1(`user:password`)).
 *
 * @category Configuration
 */
export function digestId(idWithPassword: string): string {
  const colon = typeof idWithPassword === 'string' ? idWithPassword.indexOf(':') : -1;
  if (colon < 1) throw new InvalidArgumentError('idWithPassword', "expected 'user:password'");
  return `${idWithPassword.slice(0, colon)}:${createHash('sha1').update(idWithPassword, 'utf8').digest('base64')}`;
}

/**
 * An ACL entry granting `perms` to the ZooKeeper digest user of `user:password`, for sessions
 * that connect with `auth: { scheme: 'digest', id: 'user:password' }`. The password is hashed,
 * never stored.
 *
 * @category Configuration
 */
export function digestAcl(
  idWithPassword: string,
  perms: number | AclPermName | readonly AclPermName[] = 'all',
): AclEntry {
  const entry: AclEntry = {
    perms: typeof perms === 'string' ? [perms] : perms,
    scheme: 'digest',
    id: digestId(idWithPassword),
  };
  permsMask(entry.perms, 'perms');
  return entry;
}

/** The permission bits of `perms`; throws InvalidArgumentError naming `argument` when they are not valid. */
export function permsMask(perms: unknown, argument: string): number {
  if (typeof perms === 'number') {
    if (!Number.isInteger(perms) || perms < 1 || perms > ACL_PERMS.all) {
      throw new InvalidArgumentError(
        argument,
        `expected permission bits from 1 to 31 (read 1, write 2, create 4, delete 8, admin 16), got ${perms}`,
      );
    }
    return perms;
  }
  if (!Array.isArray(perms) || perms.length === 0) {
    throw new InvalidArgumentError(
      argument,
      `expected a number or a non-empty array of ${Object.keys(ACL_PERMS).join(', ')}, got ${describe(perms)}`,
    );
  }
  let mask = 0;
  for (const name of perms as unknown[]) {
    const bits =
      typeof name === 'string' && Object.hasOwn(ACL_PERMS, name)
        ? ACL_PERMS[name as AclPermName]
        : undefined;
    if (bits === undefined)
      throw new InvalidArgumentError(
        argument,
        `unknown permission ${describe(name)}: expected one of ${Object.keys(ACL_PERMS).join(', ')}`,
      );
    mask |= bits;
  }
  return mask;
}

/** The ACL in the native client's shape (`perms` as bits, the id under `auth`). */
export function toNativeAcl(acl: readonly AclEntry[]): ZkAclEntry[] {
  return acl.map((entry, index) => ({
    perms: permsMask(entry.perms, `acl[${index}].perms`),
    scheme: entry.scheme,
    auth: entry.id,
  }));
}

/** An ACL read from ZooKeeper, as `AclEntry`s (perms as bits). */
export function fromNativeAcl(acl: readonly ZkAclEntry[]): AclEntry[] {
  return acl.map((entry) => ({ perms: entry.perms, scheme: entry.scheme, id: entry.auth }));
}

/** Validates the `auth` connect option and returns it as a list (ZooKeeper allows several per session). */
export function resolveAuth(auth: unknown): readonly ZkAuth[] {
  const list: unknown[] = Array.isArray(auth) ? auth : [auth];
  return list.map((entry, index) => {
    const argument = Array.isArray(auth) ? `auth[${index}]` : 'auth';
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidArgumentError(
        argument,
        `expected { scheme, id } such as { scheme: 'digest', id: 'user:password' }, got ${describe(entry)}`,
      );
    const { scheme, id } = entry as Partial<ZkAuth>;
    if (typeof scheme !== 'string' || scheme === '')
      throw new InvalidArgumentError(
        `${argument}.scheme`,
        `expected a ZooKeeper auth scheme such as 'digest', got ${describe(scheme)}`,
      );
    if (typeof id !== 'string')
      throw new InvalidArgumentError(`${argument}.id`, `expected a string, got ${typeof id}`);
    if (scheme === 'digest' && id.indexOf(':') < 1)
      throw new InvalidArgumentError(`${argument}.id`, "a digest id is 'user:password'");
    return { scheme, id };
  });
}

/** Permissions zk-plan needs on the nodes it creates: read them, create and delete their children. */
const NEEDED = ACL_PERMS.read | ACL_PERMS.create | ACL_PERMS.delete;

/** ZooKeeper's own schemes whose matching we can decide from `auth` alone. */
const DECIDABLE_SCHEMES = new Set(['world', 'auth', 'digest']);

/**
 * Validates the `acl` connect option against `auth`: every entry well-formed, and the ACL must
 * leave this connection able to read the nodes it creates and to create and delete their
 * children (otherwise a plan would be created that its own creator cannot fill, and workers with
 * the same options could not run it). So an ACL without `auth` is refused unless it grants those
 * to everyone, and a digest ACL must include the digest user of `auth`. When an entry uses
 * another scheme (ip, x509, sasl…), whether it matches cannot be told here and the check is skipped.
 */
export function resolveAcl(acl: unknown, auth: readonly ZkAuth[]): readonly AclEntry[] {
  if (!Array.isArray(acl) || acl.length === 0) {
    throw new InvalidArgumentError(
      'acl',
      `expected a non-empty array of { perms, scheme, id } (e.g. [digestAcl('user:password')]), got ${describe(acl)}`,
    );
  }
  const entries = (acl as unknown[]).map((entry, index): AclEntry => {
    const argument = `acl[${index}]`;
    if (typeof entry !== 'object' || entry === null)
      throw new InvalidArgumentError(
        argument,
        `expected { perms, scheme, id }, got ${describe(entry)}`,
      );
    const { perms, scheme, id } = entry as Partial<AclEntry>;
    permsMask(perms, `${argument}.perms`);
    if (typeof scheme !== 'string' || scheme === '')
      throw new InvalidArgumentError(
        `${argument}.scheme`,
        `expected a ZooKeeper scheme such as 'digest', got ${describe(scheme)}`,
      );
    if (typeof id !== 'string')
      throw new InvalidArgumentError(`${argument}.id`, `expected a string, got ${typeof id}`);
    if (scheme === 'world' && id !== 'anyone')
      throw new InvalidArgumentError(
        `${argument}.id`,
        `the only world id is 'anyone', got '${id}'`,
      );
    if (scheme === 'digest' && !/^[^:]+:[A-Za-z0-9+/]{27}=$/.test(id)) {
      throw new InvalidArgumentError(
        `${argument}.id`,
        `a digest ACL id is 'user:' + base64(sha1('user:password')), not the password itself: build the entry with digestAcl('user:password')`,
      );
    }
    if (scheme === 'auth' && auth.length === 0) {
      throw new InvalidArgumentError(
        argument,
        "scheme 'auth' grants the identities the creating session authenticated as, but no `auth` is configured: ZooKeeper would refuse every create with INVALID_ACL. Set auth: { scheme: 'digest', id: 'user:password' }",
      );
    }
    return { perms: perms as AclEntry['perms'], scheme, id };
  });
  if (entries.every((entry) => DECIDABLE_SCHEMES.has(entry.scheme))) {
    const ownDigests = new Set(
      auth.filter((a) => a.scheme === 'digest').map((a) => digestId(a.id)),
    );
    const granted = entries
      .filter(
        (entry) =>
          entry.scheme === 'world' ||
          (entry.scheme === 'auth' && auth.length > 0) ||
          (entry.scheme === 'digest' && ownDigests.has(entry.id)),
      )
      .reduce((mask, entry) => mask | permsMask(entry.perms, 'perms'), 0);
    if ((granted & NEEDED) !== NEEDED) {
      const who =
        auth.length === 0
          ? 'an unauthenticated connection (no `auth` is configured)'
          : `this connection (auth as ${auth.map((a) => (a.scheme === 'digest' ? `digest user '${a.id.slice(0, a.id.indexOf(':'))}'` : `scheme '${a.scheme}'`)).join(', ')})`;
      throw new InvalidArgumentError(
        'acl',
        `it does not grant ${who} read, create and delete on the nodes it creates, so it could not use its own plans. ` +
          "Configure auth: { scheme: 'digest', id: 'user:password' } together with an entry for the same user, e.g. acl: [digestAcl('user:password')]",
      );
    }
  }
  return entries;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value))
    return value.length === 0 ? 'an empty array' : `an array of ${value.length}`;
  return typeof value === 'string'
    ? `'${value}'`
    : typeof value === 'object'
      ? 'an object'
      : `${typeof value} ${String(value)}`;
}

/**
 * True when `actual` (a node's ACL as ZooKeeper reports it) grants nothing beyond `configured`
 * (the `acl` connect option, with its `auth` entries standing for the digest ids of `auth`, as
 * ZooKeeper expands them at create). A node made by this cluster has exactly the configured ACL;
 * one made world-open, by another tool or before the ACL was configured, fails this check.
 * Undefined when it cannot be told (a configured `auth` entry with credentials of a scheme other
 * than digest, whose ids ZooKeeper derives on the server).
 */
export function aclWithin(
  actual: readonly AclEntry[],
  configured: readonly AclEntry[],
  auth: readonly ZkAuth[],
): boolean | undefined {
  const granted = new Map<string, number>();
  const grant = (scheme: string, id: string, perms: number): void => {
    const key = `${scheme}:${id}`;
    granted.set(key, (granted.get(key) ?? 0) | perms);
  };
  for (const entry of configured) {
    const perms = permsMask(entry.perms, 'acl.perms');
    if (entry.scheme !== 'auth') {
      grant(entry.scheme, entry.id, perms);
      continue;
    }
    for (const credential of auth) {
      if (credential.scheme !== 'digest') return undefined;
      grant('digest', digestId(credential.id), perms);
    }
  }
  return actual.every((entry) => {
    const perms = permsMask(entry.perms, 'acl.perms');
    const allowed = granted.get(`${entry.scheme}:${entry.id}`) ?? 0;
    return (perms & ~allowed) === 0;
  });
}

/** A node's ACL for messages: `scheme:id:perms` entries (a digest id is a hash, never a password). */
export function describeAcl(acl: readonly AclEntry[]): string {
  const letters: ReadonlyArray<[number, string]> = [
    [ACL_PERMS.create, 'c'],
    [ACL_PERMS.delete, 'd'],
    [ACL_PERMS.read, 'r'],
    [ACL_PERMS.write, 'w'],
    [ACL_PERMS.admin, 'a'],
  ];
  return acl
    .map((entry) => {
      const perms =
        typeof entry.perms === 'number' ? entry.perms : permsMask(entry.perms, 'acl.perms');
      return `${entry.scheme}:${entry.id}:${letters.map(([bit, letter]) => (perms & bit ? letter : '')).join('')}`;
    })
    .join(', ');
}
