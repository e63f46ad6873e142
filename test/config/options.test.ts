import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { MAX_TIMER_MS } from '../../src/util/abort-signals.js';
import { assertDurationMs } from '../../src/config/option-checks.js';
import {
  DEFAULT_BACKOFF,
  resolveBackoff,
  resolveConnectOptions,
  resolvePoolSize,
  resolveWaitOptions,
  resolveWorkerOptions,
  type ConnectOptions,
  type WorkerOptions,
} from '../../src/config/options.js';
import { planSettingsFrom, resolvePlanSettings } from '../../src/config/plan-options.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { expectThrows } from '../support/expect-error.js';

describe('resolveBackoff', () => {
  it('fills in the defaults 100 / 1.5 / 10000', () => {
    expect(resolveBackoff()).toEqual({ initial: 100, increase: 1.5, max: 10_000 });
    expect(resolveBackoff({})).toEqual({ initial: 100, increase: 1.5, max: 10_000 });
    expect(DEFAULT_BACKOFF).toEqual({ initial: 100, increase: 1.5, max: 10_000 });
  });

  it('applies overrides field by field', () => {
    expect(resolveBackoff({ initial: 5 })).toEqual({ initial: 5, increase: 1.5, max: 10_000 });
    expect(resolveBackoff({ increase: 3 })).toEqual({ initial: 100, increase: 3, max: 10_000 });
    expect(resolveBackoff({ max: 42 })).toEqual({ initial: 100, increase: 1.5, max: 42 });
    expect(resolveBackoff({ initial: 1, increase: 2, max: 3 })).toEqual({
      initial: 1,
      increase: 2,
      max: 3,
    });
  });

  it('falls back to the default for fields set to undefined', () => {
    expect(resolveBackoff({ initial: undefined, increase: 2, max: undefined })).toEqual({
      initial: 100,
      increase: 2,
      max: 10_000,
    });
  });

  it('accepts initial 0, max 0 and increase 1', () => {
    expect(resolveBackoff({ initial: 0, increase: 1, max: 0 })).toEqual({
      initial: 0,
      increase: 1,
      max: 0,
    });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 5],
    ['a negative initial', { initial: -1 }],
    ['a string initial', { initial: '100' }],
    ['increase < 1', { increase: 0.9 }],
    ['an infinite max', { max: Number.POSITIVE_INFINITY }],
    ['a NaN max', { max: Number.NaN }],
  ])('rejects %s with InvalidArgumentError', (_title, attrs) => {
    const error = expectThrows(() => resolveBackoff(attrs as never), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});

describe('resolveConnectOptions', () => {
  it('applies the timeout defaults', () => {
    expect(resolveConnectOptions({ connect: '127.0.0.1:2181' })).toEqual({
      connect: '127.0.0.1:2181',
      sessionTimeoutMs: DEFAULTS.sessionTimeoutMs,
      connectTimeoutMs: DEFAULTS.connectTimeoutMs,
    });
    expect(DEFAULTS.sessionTimeoutMs).toBe(10_000);
    expect(DEFAULTS.connectTimeoutMs).toBe(15_000);
  });

  it('keeps given timeouts', () => {
    expect(
      resolveConnectOptions({ connect: 'zk:2181', sessionTimeoutMs: 3000, connectTimeoutMs: 500 }),
    ).toEqual({
      connect: 'zk:2181',
      sessionTimeoutMs: 3000,
      connectTimeoutMs: 500,
    });
  });

  it('trims the connect string', () => {
    expect(resolveConnectOptions({ connect: '  a:1,b:2/chroot \n' }).connect).toBe(
      'a:1,b:2/chroot',
    );
  });

  it.each<[string, unknown]>([
    ['an empty connect string', { connect: '' }],
    ['a blank connect string', { connect: '   ' }],
    ['a missing connect string', {}],
    ['a non-string connect', { connect: 2181 }],
    ['a zero session timeout', { connect: 'a:1', sessionTimeoutMs: 0 }],
    ['a negative session timeout', { connect: 'a:1', sessionTimeoutMs: -1 }],
    ['a zero connect timeout', { connect: 'a:1', connectTimeoutMs: 0 }],
    ['a negative connect timeout', { connect: 'a:1', connectTimeoutMs: -100 }],
    ['a NaN connect timeout', { connect: 'a:1', connectTimeoutMs: Number.NaN }],
    ['a string session timeout', { connect: 'a:1', sessionTimeoutMs: '1000' }],
    ['a zero full scan interval', { connect: 'a:1', fullScanIntervalMs: 0 }],
    ['a string full scan interval', { connect: 'a:1', fullScanIntervalMs: '1000' }],
    ['a fractional full scan interval', { connect: 'a:1', fullScanIntervalMs: 1.5 }],
    ['null options', null],
  ])('rejects %s with InvalidArgumentError', (_title, options) => {
    const error = expectThrows(
      () => resolveConnectOptions(options as ConnectOptions),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});

describe('resolveWorkerOptions', () => {
  it('applies the defaults: allowInline false, inlineTimeoutMs 5000, default backoff', () => {
    const resolved = resolveWorkerOptions({}, 'host:1');
    expect(resolved.allowInline).toBe(false);
    expect(resolved.inlineTimeoutMs).toBe(5000);
    expect(resolved.allowShell).toBe(false);
    expect(resolved.shellKillGraceMs).toBe(5000);
    expect(resolved.backoff).toEqual({ initial: 100, increase: 1.5, max: 10_000 });
  });

  it('uses the defaults when called without options', () => {
    const resolved = resolveWorkerOptions(undefined, 'p');
    expect(resolved.allowInline).toBe(false);
    expect(resolved.inlineTimeoutMs).toBe(5000);
  });

  it('generates a worker id prefixed by the given prefix, unique per call', () => {
    const ids = Array.from({ length: 5 }, () => resolveWorkerOptions({}, 'myhost:4242').workerId);
    for (const id of ids) expect(id.startsWith('myhost:4242:')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(resolveWorkerOptions({}, 'other').workerId.startsWith('other:')).toBe(true);
  });

  it('keeps given values', () => {
    const resolved = resolveWorkerOptions(
      {
        allowInline: true,
        inlineTimeoutMs: 100,
        allowShell: true,
        shellKillGraceMs: 0,
        workerId: 'worker-a',
        backoff: { initial: 1, max: 2 },
        maxResultBytes: 1_000,
        taskLogs: false,
      },
      'ignored',
    );
    expect(resolved).toEqual({
      allowInline: true,
      inlineTimeoutMs: 100,
      allowShell: true,
      shellKillGraceMs: 0,
      workerId: 'worker-a',
      backoff: { initial: 1, increase: 1.5, max: 2 },
      maxResultBytes: 1_000,
      taskLogs: false,
    });
  });

  it.each<[string, unknown]>([
    ['null options', null],
    ['a string allowInline', { allowInline: 'yes' }],
    ['a numeric allowInline', { allowInline: 1 }],
    ['a string inlineTimeoutMs', { inlineTimeoutMs: '5000' }],
    ['a zero inlineTimeoutMs', { inlineTimeoutMs: 0 }],
    ['a negative inlineTimeoutMs', { inlineTimeoutMs: -1 }],
    ['a string allowShell', { allowShell: 'true' }],
    ['a negative shellKillGraceMs', { shellKillGraceMs: -1 }],
    ['a fractional shellKillGraceMs', { shellKillGraceMs: 1.5 }],
    ['an empty workerId', { workerId: '' }],
    ['a numeric workerId', { workerId: 7 }],
    ['an invalid backoff', { backoff: { increase: 0.1 } }],
    ['a null backoff', { backoff: null }],
  ])('rejects %s with InvalidArgumentError', (_title, options) => {
    const error = expectThrows(
      () => resolveWorkerOptions(options as WorkerOptions, 'p'),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});

// vm2 hands inlineTimeoutMs to node:vm, which only takes a whole number of ms in 1..4294967295:
// anything else passes option validation today and then fails every inline task at run time.
describe('resolveWorkerOptions: inlineTimeoutMs must be usable by the sandbox', () => {
  it.each([1.5, 4_294_967_296])(
    'rejects inlineTimeoutMs %d with InvalidArgumentError',
    (inlineTimeoutMs) => {
      const error = expectThrows(
        () => resolveWorkerOptions({ inlineTimeoutMs }, 'p'),
        InvalidArgumentError,
      );
      expect(error.code).toBe('INVALID_ARGUMENT');
    },
  );

  it('accepts the largest timeout node:vm supports', () => {
    expect(resolveWorkerOptions({ inlineTimeoutMs: 4_294_967_295 }, 'p').inlineTimeoutMs).toBe(
      4_294_967_295,
    );
  });
});

describe('resolvePoolSize', () => {
  it('defaults to one worker and a 30 s drain timeout', () => {
    expect(resolvePoolSize({})).toEqual({
      count: 1,
      drainTimeoutMs: 30_000,
      retention: { maxAgeMs: 604_800_000, maxCount: 1_000, sweepIntervalMs: 60_000 },
    });
  });

  it('keeps a valid count and drain timeout (0 allowed)', () => {
    expect(resolvePoolSize({ count: 4, drainTimeoutMs: 0, retention: false })).toEqual({
      count: 4,
      drainTimeoutMs: 0,
      retention: undefined,
    });
  });

  it.each<[string, unknown]>([
    ['count 0', { count: 0 }],
    ['count 1.5', { count: 1.5 }],
    ['count -1', { count: -1 }],
    ['count NaN', { count: Number.NaN }],
    ['a string count', { count: '2' }],
    ['a negative drain timeout', { drainTimeoutMs: -1 }],
    ['an infinite drain timeout', { drainTimeoutMs: Number.POSITIVE_INFINITY }],
  ])('rejects %s with InvalidArgumentError', (_title, options) => {
    const error = expectThrows(() => resolvePoolSize(options as never), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
  });
});

// Node timers take a whole number of ms up to 2^31 − 1: a fraction throws a raw RangeError
// (AbortSignal.timeout) and a larger value fires at once. Every time option is checked for that.
describe('assertDurationMs: time options are whole ms a Node timer can wait', () => {
  it.each([1, 1500, MAX_TIMER_MS])('accepts %d', (value) => {
    expect(() => assertDurationMs('timeoutMs', value)).not.toThrow();
  });

  it('accepts 0 only where allowed', () => {
    expect(() => assertDurationMs('drainTimeoutMs', 0, { allowZero: true })).not.toThrow();
    expect(
      expectThrows(() => assertDurationMs('timeoutMs', 0), InvalidArgumentError).message,
    ).toContain('from 1 to 2147483647');
  });

  it.each<[string, unknown]>([
    ['a fraction', 1500.5],
    ['more than a timer can wait', 3e9],
    ['far more', 5e9],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a negative number', -1],
    ['a numeric string', '100'],
  ])(
    'refuses %s with a coded InvalidArgumentError naming the option and the range',
    (_title, value) => {
      const error = expectThrows(() => assertDurationMs('timeoutMs', value), InvalidArgumentError);
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.argument).toBe('timeoutMs');
      expect(error.message).toMatch(
        /^Invalid timeoutMs: expected a whole number of ms from 1 to 2147483647, got /,
      );
    },
  );

  it('is the bound the CLI uses too', async () => {
    const { integer } = await import('../../src/cli/options.js');
    const parseMs = integer(1);
    expect(parseMs(String(MAX_TIMER_MS))).toBe(MAX_TIMER_MS);
    expect(() => parseMs(String(MAX_TIMER_MS + 1))).toThrow(/2147483647/);
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
  });
});

describe('every time option of the API refuses what a timer cannot wait', () => {
  const bad = [1500.5, 3e9];
  it.each(bad)('connect: sessionTimeoutMs and connectTimeoutMs %d', (value) => {
    expect(
      expectThrows(
        () => resolveConnectOptions({ connect: 'a:1', sessionTimeoutMs: value }),
        InvalidArgumentError,
      ).argument,
    ).toBe('sessionTimeoutMs');
    expect(
      expectThrows(
        () => resolveConnectOptions({ connect: 'a:1', connectTimeoutMs: value }),
        InvalidArgumentError,
      ).argument,
    ).toBe('connectTimeoutMs');
  });

  it.each(bad)(
    'worker and pool: inlineTimeoutMs (fraction), drainTimeoutMs, backoff.initial and backoff.max %d',
    (value) => {
      expect(
        expectThrows(() => resolvePoolSize({ drainTimeoutMs: value }), InvalidArgumentError)
          .argument,
      ).toBe('drainTimeoutMs');
      expect(
        expectThrows(() => resolveBackoff({ initial: value }), InvalidArgumentError).argument,
      ).toBe('backoff.initial');
      expect(
        expectThrows(() => resolveBackoff({ max: value }), InvalidArgumentError).argument,
      ).toBe('backoff.max');
      expect(
        expectThrows(
          () => resolveWorkerOptions({ backoff: { max: value } }, 'p'),
          InvalidArgumentError,
        ).argument,
      ).toBe('backoff.max');
      expect(
        expectThrows(
          () => resolveWorkerOptions({ inlineTimeoutMs: 1.5 }, 'p'),
          InvalidArgumentError,
        ).argument,
      ).toBe('inlineTimeoutMs');
    },
  );

  it.each(bad)('plan and retry: initialDelayMs and maxDelayMs %d', (value) => {
    expect(
      expectThrows(() => resolvePlanSettings({ initialDelayMs: value }), InvalidArgumentError)
        .argument,
    ).toBe('initialDelayMs');
    expect(
      expectThrows(() => resolvePlanSettings({ maxDelayMs: value }), InvalidArgumentError).argument,
    ).toBe('maxDelayMs');
  });

  it.each(bad)('waitForCompletion: timeoutMs %d', (value) => {
    expect(
      expectThrows(() => resolveWaitOptions({ timeoutMs: value }), InvalidArgumentError).argument,
    ).toBe('timeoutMs');
  });

  it('keeps the defaults and the zero values that mean "none"', () => {
    expect(resolveWaitOptions()).toEqual({ timeoutMs: DEFAULTS.waitTimeoutMs });
    expect(resolvePlanSettings({ initialDelayMs: 0, maxDelayMs: 0 }).retry).toMatchObject({
      initialDelayMs: 0,
      maxDelayMs: 0,
    });
    expect(resolvePoolSize({ drainTimeoutMs: 0 }).drainTimeoutMs).toBe(0);
  });
});

describe('a misspelled option key is refused, naming it and the known keys', () => {
  it.each<[string, () => unknown, string, string]>([
    [
      'ZkPlan.connect',
      () =>
        resolveConnectOptions({ connect: 'a:1', sessionTimeout: 1 } as unknown as ConnectOptions),
      'sessionTimeout',
      'sessionTimeoutMs',
    ],
    [
      'createPlan',
      () => resolvePlanSettings({ maxAttempt: 3 } as never),
      'maxAttempt',
      'maxAttempts',
    ],
    ['startWorkers', () => resolvePoolSize({ cout: 4 } as never), 'cout', 'count'],
    [
      'worker',
      () => resolveWorkerOptions({ allowInlines: true } as never, 'p'),
      'allowInlines',
      'allowInline',
    ],
    ['backoff', () => resolveBackoff({ inital: 5 } as never), 'inital', 'initial'],
    [
      'waitForCompletion',
      () => resolveWaitOptions({ timeout: 5 } as never),
      'timeout',
      'timeoutMs',
    ],
  ])('%s', (where, run, key, suggestion) => {
    const error = expectThrows(run, InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.argument).toBe(key);
    expect(error.message).toContain(`unknown option of ${where}`);
    expect(error.message).toContain(`did you mean ${suggestion}`);
    expect(error.message).toContain('the known options are');
  });

  it('lists every known key', () => {
    const error = expectThrows(() => resolveWaitOptions({ zzz: 1 } as never), InvalidArgumentError);
    expect(error.message).toBe(
      'Invalid zzz: unknown option of waitForCompletion; the known options are timeoutMs, signal',
    );
  });

  it('lets startWorkers pass its pool options on to the worker options, but not worker() on its own', () => {
    const options = { count: 2, drainTimeoutMs: 10 };
    resolvePoolSize(options);
    expect(() => resolveWorkerOptions(options as WorkerOptions, 'p')).not.toThrow();
    expect(
      expectThrows(() => resolveWorkerOptions({ count: 2 } as never, 'p'), InvalidArgumentError)
        .argument,
    ).toBe('count');
  });

  it('still reads a stored plan whose retry policy holds fields of another tool', () => {
    expect(
      planSettingsFrom({ failurePolicy: 'failFast', retry: { maxAttempts: 5, jitter: true } }).retry
        .maxAttempts,
    ).toBe(5);
  });
});
