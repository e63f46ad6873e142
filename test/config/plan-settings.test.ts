import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PLAN_SETTINGS,
  FOREIGN_PLAN_SETTINGS,
  planSettingsFrom,
  resolvePlanSettings,
} from '../../src/config/plan-options.js';

describe('planSettingsFrom: settings read back from a plan node, whatever it holds', () => {
  it('reads what createPlan stored', () => {
    const stored = resolvePlanSettings({
      failurePolicy: 'failFast',
      maxAttempts: 5,
      initialDelayMs: 0,
      multiplier: 3,
      maxDelayMs: 10,
      history: true,
      priority: -3,
    });
    expect(planSettingsFrom(stored)).toEqual({
      failurePolicy: 'failFast',
      history: true,
      priority: -3,
      taskPriorities: false,
      retry: { maxAttempts: 5, initialDelayMs: 0, multiplier: 3, maxDelayMs: 10 },
    });
    expect(planSettingsFrom({ ...stored, taskPriorities: true }).taskPriorities).toBe(true);
    expect(planSettingsFrom({ ...stored, priority: 2.5 }).priority).toBe(0); // not a whole number: the default
  });

  it('carries the plan name when the node holds one (worker logs show it), and none when it is not a non-empty string', () => {
    const stored = resolvePlanSettings({});
    expect(planSettingsFrom({ ...stored, name: 'nightly' }).name).toBe('nightly');
    expect(planSettingsFrom(stored)).not.toHaveProperty('name');
    expect(planSettingsFrom({ ...stored, name: '' })).not.toHaveProperty('name');
    expect(planSettingsFrom({ ...stored, name: 42 })).not.toHaveProperty('name');
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['NaN', Number.NaN],
    ['a string', 'failFast'],
    ['a boolean', true],
    ['an array', ['failFast']],
    ['an empty object', {}],
    ['a function', () => 'failFast'],
  ])('falls back to the defaults (without history) for %s', (_title, stored) => {
    expect(planSettingsFrom(stored)).toEqual(FOREIGN_PLAN_SETTINGS);
  });

  it.each<[string, unknown]>([
    ['an unknown failure policy', { failurePolicy: 'explode' }],
    ['a failure policy of the wrong type', { failurePolicy: 1 }],
    ['maxAttempts 0', { retry: { maxAttempts: 0 } }],
    ['a fractional maxAttempts', { retry: { maxAttempts: 2.5 } }],
    ['a NaN maxAttempts', { retry: { maxAttempts: Number.NaN } }],
    ['a string maxAttempts', { retry: { maxAttempts: '3' } }],
    ['a negative initialDelayMs', { retry: { initialDelayMs: -1 } }],
    ['an initialDelayMs past the longest timer', { retry: { initialDelayMs: 2 ** 31 } }],
    ['an infinite maxDelayMs', { retry: { maxDelayMs: Number.POSITIVE_INFINITY } }],
    ['a huge maxDelayMs', { retry: { maxDelayMs: Number.MAX_VALUE } }],
    ['a multiplier below 1', { retry: { multiplier: 0.5 } }],
    ['a NaN multiplier', { retry: { multiplier: Number.NaN } }],
    ['a null multiplier', { retry: { multiplier: null } }],
  ])('falls back to the defaults as a whole (without history) for %s', (_title, stored) => {
    expect(planSettingsFrom(stored)).toEqual(FOREIGN_PLAN_SETTINGS);
  });

  it('keeps a failure policy when the retry policy is missing or not an object', () => {
    for (const retry of [undefined, null, 5, 'fast', true]) {
      expect(planSettingsFrom({ failurePolicy: 'failFast', retry })).toEqual({
        ...FOREIGN_PLAN_SETTINGS,
        failurePolicy: 'failFast',
      });
    }
  });

  it('reads a retry array as no retry fields at all', () => {
    expect(planSettingsFrom({ retry: [1, 2, 3] })).toEqual(FOREIGN_PLAN_SETTINGS);
  });

  it('ignores retry fields it does not know (another tool stored more)', () => {
    expect(planSettingsFrom({ retry: { maxAttempts: 7, jitter: 'full', __proto__x: 1 } })).toEqual({
      ...FOREIGN_PLAN_SETTINGS,
      retry: { ...FOREIGN_PLAN_SETTINGS.retry, maxAttempts: 7 },
    });
  });

  it('takes history only when it is exactly true: a plan node another tool wrote has no history node to write to', () => {
    expect(planSettingsFrom({ history: true }).history).toBe(true);
    for (const history of ['true', 1, {}, null, undefined])
      expect(planSettingsFrom({ history }).history).toBe(false);
    expect(FOREIGN_PLAN_SETTINGS).toEqual({ ...DEFAULT_PLAN_SETTINGS, history: false });
  });

  it('createPlan keeps a history unless told { history: false }', () => {
    expect(resolvePlanSettings({}).history).toBe(true);
    expect(resolvePlanSettings({ history: false }).history).toBe(false);
    expect(() => resolvePlanSettings({ history: 'no' as unknown as boolean })).toThrow(/history/);
  });

  it('accepts the largest whole numbers the options allow', () => {
    const settings = planSettingsFrom({
      retry: {
        maxAttempts: Number.MAX_SAFE_INTEGER,
        initialDelayMs: 2_147_483_647,
        maxDelayMs: 2_147_483_647,
        multiplier: 1e6,
      },
    });
    expect(settings.retry).toEqual({
      maxAttempts: Number.MAX_SAFE_INTEGER,
      initialDelayMs: 2_147_483_647,
      maxDelayMs: 2_147_483_647,
      multiplier: 1e6,
    });
  });
});
