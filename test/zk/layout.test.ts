import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  argPathForDep,
  assertSequentialPath,
  assertValidPath,
  childPath,
  hasSequentialName,
  keptResultPathFor,
  nameOf,
  parentOf,
  serialOf,
  sortBySerial,
} from '../../src/zk/layout.js';
import { expectThrows } from '../support/expect-error.js';

describe('childPath', () => {
  it('does not double the slash under the root', () => {
    expect(childPath('/', 'plans')).toBe('/plans');
  });

  it('joins a parent and a child with one slash', () => {
    expect(childPath('/plans', 'plan-0000000001')).toBe('/plans/plan-0000000001');
    expect(childPath('/a/b', 'c')).toBe('/a/b/c');
  });
});

describe('nameOf', () => {
  it('returns the last segment', () => {
    expect(nameOf('/plans/plan-0000000001/task-0000000002')).toBe('task-0000000002');
    expect(nameOf('/plans')).toBe('plans');
  });

  it('returns an empty name for the root', () => {
    expect(nameOf('/')).toBe('');
  });
});

describe('parentOf', () => {
  it('drops the last segment', () => {
    expect(parentOf('/plans/plan-0000000001/task-0000000002')).toBe('/plans/plan-0000000001');
  });

  it('returns / for a top-level node', () => {
    expect(parentOf('/plans')).toBe('/');
  });
});

describe('hasSequentialName', () => {
  it('accepts the prefix followed by digits', () => {
    expect(hasSequentialName('task-0000000003', 'task-')).toBe(true);
    expect(hasSequentialName('dep-0000000012', 'dep-')).toBe(true);
    expect(hasSequentialName('result-0000000001', 'result-')).toBe(true);
    expect(hasSequentialName('task-2345', 'task-')).toBe(true);
  });

  it('rejects another prefix, a missing serial or a non-numeric serial', () => {
    expect(hasSequentialName('dep-0000000003', 'task-')).toBe(false);
    expect(hasSequentialName('task-', 'task-')).toBe(false);
    expect(hasSequentialName('task-12a4', 'task-')).toBe(false);
    expect(hasSequentialName('task-0000000003x', 'task-')).toBe(false);
    expect(hasSequentialName('ready', 'task-')).toBe(false);
    expect(hasSequentialName('mytask-0000000001', 'task-')).toBe(false);
    expect(hasSequentialName('result', 'result-')).toBe(false);
  });
});

describe('serialOf', () => {
  it('returns the serial of a sequential name', () => {
    expect(serialOf('dep-0000000007', 'dep-')).toBe('0000000007');
  });

  it('returns undefined for a name without that prefix and serial', () => {
    expect(serialOf('arg-0000000007', 'dep-')).toBeUndefined();
    expect(serialOf('dep-x', 'dep-')).toBeUndefined();
  });
});

describe('sortBySerial', () => {
  it('sorts unordered children by serial and filters out other names', () => {
    const children = [
      'task-0000000010',
      'ready',
      'task-0000000002',
      'dep-0000000001',
      'task-0000000001',
      'owner',
      'task-x',
      'result-0000000000',
    ];
    expect(sortBySerial(children, 'task-')).toEqual([
      'task-0000000001',
      'task-0000000002',
      'task-0000000010',
    ]);
  });

  it('orders numerically, not by string, across the 10-digit range', () => {
    const children = [
      'dep-2147483647',
      'dep-0000000100',
      'dep-0000000099',
      'dep-1000000000',
      'dep-0000000000',
    ];
    expect(sortBySerial(children, 'dep-')).toEqual([
      'dep-0000000000',
      'dep-0000000099',
      'dep-0000000100',
      'dep-1000000000',
      'dep-2147483647',
    ]);
  });

  it('orders unpadded serials numerically', () => {
    expect(sortBySerial(['task-10', 'task-9', 'task-100'], 'task-')).toEqual([
      'task-9',
      'task-10',
      'task-100',
    ]);
  });

  it('does not modify its input', () => {
    const children = ['task-0000000002', 'task-0000000001'];
    sortBySerial(children, 'task-');
    expect(children).toEqual(['task-0000000002', 'task-0000000001']);
  });
});

describe('argPathForDep', () => {
  it('maps dep-N to arg-N in the same task', () => {
    expect(argPathForDep('/plans/plan-0000000001/task-0000000007/dep-0000000012')).toBe(
      '/plans/plan-0000000001/task-0000000007/arg-0000000012',
    );
  });

  it.each([
    '/plans/plan-0000000001/task-0000000007/arg-0000000012',
    '/plans/plan-0000000001/task-0000000007/dep-x',
    '/plans/plan-0000000001/task-0000000007',
    '/dep',
  ])('rejects the non-dep path %s with InvalidArgumentError', (path) => {
    const error = expectThrows(() => argPathForDep(path), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.path).toBe(path);
  });
});

describe('keptResultPathFor', () => {
  it('maps <plan>/task-N to <plan>/result-N', () => {
    expect(keptResultPathFor('/plans/plan-0000000001/task-0000000005')).toBe(
      '/plans/plan-0000000001/result-0000000005',
    );
  });

  it('rejects a path that is not a task', () => {
    const error = expectThrows(
      () => keptResultPathFor('/plans/plan-0000000001'),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});

describe('assertValidPath', () => {
  it.each(['/', '/plans', '/a/b/c', '/a/.b', '/a/..b', '/a/b.', '/a-b_c:d', '/ünïcödé'])(
    'accepts %j',
    (path) => {
      expect(() => assertValidPath('path', path)).not.toThrow();
    },
  );

  it.each([
    ['no leading slash', 'plans'],
    ['a trailing slash', '/plans/'],
    ['an empty segment', '/a//b'],
    ['a leading empty segment', '//a'],
    ['a "." segment', '/a/./b'],
    ['a trailing "." segment', '/a/.'],
    ['a ".." segment', '/a/../b'],
    ['a trailing ".." segment', '/a/..'],
    ['a NUL character', '/a\u0000b'],
    ['a newline', '/a\nb'],
    ['a tab', '/a\tb'],
    ['DEL', '/a\u007fb'],
    ['the empty string', ''],
  ])('rejects a path with %s', (_title, path) => {
    const error = expectThrows(() => assertValidPath('path', path), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.argument).toBe('path');
  });

  it.each<[string, unknown]>([
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { path: '/a' }],
  ])('rejects %s (non-string)', (_title, path) => {
    const error = expectThrows(() => assertValidPath('path', path), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
  });

  // ZooKeeper's PathUtils.validatePath also refuses C1 control characters (U+0080..U+009F).
  it('rejects a path with a C1 control character (U+0085), which ZooKeeper refuses', () => {
    expectThrows(() => assertValidPath('path', '/a\u0085b'), InvalidArgumentError);
  });
});

describe('assertSequentialPath', () => {
  it('accepts a valid path ending in <prefix><serial>', () => {
    expect(() => assertSequentialPath('plan', '/plans/plan-0000000001', 'plan-')).not.toThrow();
    expect(() =>
      assertSequentialPath('task', '/plans/plan-0000000001/task-0000000002', 'task-'),
    ).not.toThrow();
  });

  it.each<[string, unknown]>([
    ['another prefix', '/plans/plan-0000000001'],
    ['no serial', '/plans/plan-0000000001/task-'],
    ['an invalid path', 'plans/task-0000000001'],
    ['a trailing slash', '/plans/task-0000000001/'],
    ['a non-string', 1],
  ])('rejects %s', (_title, path) => {
    const error = expectThrows(
      () => assertSequentialPath('task', path, 'task-'),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});
