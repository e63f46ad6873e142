import { describe, expect, it } from 'vitest';
import { resolveConnectOptions, type ConnectOptions } from '../../src/config/options.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  ACL_PERMS,
  aclWithin,
  creatorAllAcl,
  describeAcl,
  digestAcl,
  digestId,
  openAcl,
  permsMask,
  toNativeAcl,
} from '../../src/zk/acl.js';
import { expectThrows } from '../support/expect-error.js';

const alice = { scheme: 'digest', id: 'alice:secret' } as const;

describe('digest ids and ACL helpers', () => {
  it('computes the digest id as ZooKeeper does (user: + base64(sha1(user:password)))', () => {
    // The value ZooKeeper's documentation gives for super:test.
    expect(digestId('super:test')).toBe('super:D/InIHSb7yEEbrWz8b9l71RjZJU=');
    expect(digestId('alice:pa:ss')).toMatch(/^alice:[A-Za-z0-9+/]{27}=$/);
    expect(() => digestId('no-password')).toThrow(InvalidArgumentError);
  });

  it('builds entries and masks', () => {
    expect(digestAcl('alice:secret')).toEqual({
      perms: ['all'],
      scheme: 'digest',
      id: digestId('alice:secret'),
    });
    expect(digestAcl('alice:secret', ['read', 'create'])).toMatchObject({
      perms: ['read', 'create'],
    });
    expect(permsMask(['read', 'create', 'delete'], 'p')).toBe(13);
    expect(permsMask(['all'], 'p')).toBe(ACL_PERMS.all);
    expect(toNativeAcl([...openAcl, ...creatorAllAcl, digestAcl('a:b', 'read')])).toEqual([
      { perms: 31, scheme: 'world', auth: 'anyone' },
      { perms: 31, scheme: 'auth', auth: '' },
      { perms: 1, scheme: 'digest', auth: digestId('a:b') },
    ]);
    expect(() => digestAcl('alice:secret', 'everything' as 'all')).toThrow(
      /unknown permission 'everything'/,
    );
    expect(() => permsMask(0, 'p')).toThrow(InvalidArgumentError);
    expect(() => permsMask([], 'p')).toThrow(InvalidArgumentError);
  });
});

describe('resolveConnectOptions with auth and acl', () => {
  it('adds nothing when neither is given, and normalises auth to a list', () => {
    expect(resolveConnectOptions({ connect: 'a:1' })).not.toHaveProperty('auth');
    expect(resolveConnectOptions({ connect: 'a:1' })).not.toHaveProperty('acl');
    const resolved = resolveConnectOptions({
      connect: 'a:1',
      auth: alice,
      acl: [digestAcl('alice:secret')],
    });
    expect(resolved.auth).toEqual([alice]);
    expect(resolved.acl).toEqual([digestAcl('alice:secret')]);
    expect(
      resolveConnectOptions({ connect: 'a:1', auth: [alice], acl: creatorAllAcl }).acl,
    ).toEqual(creatorAllAcl);
    expect(resolveConnectOptions({ connect: 'a:1', acl: openAcl }).acl).toEqual(openAcl);
    // Entries with schemes whose matching cannot be decided here (ip, x509, sasl…) are not second-guessed.
    expect(
      resolveConnectOptions({
        connect: 'a:1',
        acl: [{ perms: 31, scheme: 'ip', id: '10.0.0.0/8' }],
      }).acl,
    ).toHaveLength(1);
  });

  it.each<[string, Partial<ConnectOptions>, RegExp]>([
    [
      'acl without auth',
      { acl: [digestAcl('alice:secret')] },
      /^Invalid acl: .*no `auth` is configured/,
    ],
    [
      'acl for another user',
      { auth: { scheme: 'digest', id: 'bob:x' }, acl: [digestAcl('alice:secret')] },
      /digest user 'bob'/,
    ],
    [
      'acl granting only read',
      { auth: alice, acl: [digestAcl('alice:secret', 'read')] },
      /read, create and delete/,
    ],
    ['creatorAllAcl without auth', { acl: creatorAllAcl }, /^Invalid acl\[0\]: .*INVALID_ACL/],
    ['an empty acl', { auth: alice, acl: [] }, /^Invalid acl: .*non-empty array/],
    [
      'a password as digest id',
      { auth: alice, acl: [{ perms: ['all'], scheme: 'digest', id: 'alice:secret' }] },
      /^Invalid acl\[0\]\.id: .*digestAcl/,
    ],
    [
      'an unknown perm',
      { auth: alice, acl: [{ perms: ['rwx' as 'all'], scheme: 'world', id: 'anyone' }] },
      /^Invalid acl\[0\]\.perms: unknown permission 'rwx'/,
    ],
    [
      'perms out of range',
      { auth: alice, acl: [{ perms: 64, scheme: 'world', id: 'anyone' }] },
      /^Invalid acl\[0\]\.perms/,
    ],
    [
      'a world id other than anyone',
      { acl: [{ perms: 31, scheme: 'world', id: 'everyone' }] },
      /^Invalid acl\[0\]\.id/,
    ],
    [
      'a second entry without scheme',
      { auth: alice, acl: [digestAcl('alice:secret'), { perms: 1, id: 'x' } as never] },
      /^Invalid acl\[1\]\.scheme/,
    ],
    ['auth without scheme', { auth: { id: 'alice:secret' } as never }, /^Invalid auth\.scheme/],
    [
      'a digest auth without password',
      { auth: { scheme: 'digest', id: 'alice' } },
      /^Invalid auth\.id/,
    ],
    ['a non-object auth in a list', { auth: [alice, 'x' as never] }, /^Invalid auth\[1\]/],
  ])('rejects %s with InvalidArgumentError naming the entry', (_title, options, message) => {
    const error = expectThrows(
      () => resolveConnectOptions({ connect: 'a:1', ...options }),
      InvalidArgumentError,
    );
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('secret');
  });
});

describe('aclWithin: a node grants nothing beyond the configured acl', () => {
  const aliceDigest = { perms: 31, scheme: 'digest', id: digestId('alice:secret') };

  it('accepts the configured ACL itself and a narrower one', () => {
    expect(aclWithin([aliceDigest], [digestAcl('alice:secret')], [alice])).toBe(true);
    expect(
      aclWithin([{ ...aliceDigest, perms: ACL_PERMS.read }], [digestAcl('alice:secret')], [alice]),
    ).toBe(true);
  });

  it('refuses world-open nodes, other identities and extra permissions', () => {
    expect(
      aclWithin(
        [{ perms: 31, scheme: 'world', id: 'anyone' }],
        [digestAcl('alice:secret')],
        [alice],
      ),
    ).toBe(false);
    expect(
      aclWithin(
        [aliceDigest, { perms: 1, scheme: 'digest', id: digestId('bob:x') }],
        [digestAcl('alice:secret')],
        [alice],
      ),
    ).toBe(false);
    expect(
      aclWithin([aliceDigest], [digestAcl('alice:secret', ['read', 'create', 'delete'])], [alice]),
    ).toBe(false);
  });

  it("expands 'auth' entries to the digest ids of the credentials, and cannot tell for other schemes", () => {
    expect(aclWithin([aliceDigest], creatorAllAcl, [alice])).toBe(true);
    expect(aclWithin([{ perms: 31, scheme: 'world', id: 'anyone' }], creatorAllAcl, [alice])).toBe(
      false,
    );
    expect(
      aclWithin([aliceDigest], creatorAllAcl, [{ scheme: 'x509', id: 'cn=alice' }]),
    ).toBeUndefined();
  });

  it('describes an ACL without secrets', () => {
    expect(describeAcl([{ perms: 31, scheme: 'world', id: 'anyone' }])).toBe('world:anyone:cdrwa');
    expect(
      describeAcl([{ perms: ['read', 'create'], scheme: 'digest', id: digestId('alice:secret') }]),
    ).toBe(`digest:${digestId('alice:secret')}:cr`);
  });
});
