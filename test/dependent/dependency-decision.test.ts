import { describe, expect, it } from 'vitest';
import {
  decideDependency,
  type DependencySeen,
  type PlanSeen,
} from '../../src/dependent/dependency-decision.js';
import { checkTarget } from '../../src/dependent/dependency-target.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';

const running: PlanSeen = { exists: true, state: 'running', done: 1, total: 3, failed: [] };
const TICK = Date.UTC(2026, 10, 26, 2, 30);

function tick(seen: Partial<Extract<DependencySeen, { kind: 'tick' }>>): DependencySeen {
  return { kind: 'tick', schedule: 'nightly', at: TICK, tick: TICK, ...seen };
}

describe('decideDependency', () => {
  it.each<[string, PlanSeen, string, string]>([
    ['absent', { exists: false }, 'wait', 'plan /p does not exist (yet)'],
    ['running', running, 'wait', 'plan /p is running (1/3 tasks done)'],
    ['paused', { ...running, state: 'paused' }, 'wait', 'plan /p is paused'],
    ['building', { ...running, state: 'building' }, 'wait', 'plan /p is building'],
    [
      'failed',
      { ...running, state: 'failed', failed: ['load'] },
      'fail',
      'plan /p failed (failed: load)',
    ],
    ['cancelled', { ...running, state: 'cancelled' }, 'fail', 'plan /p was cancelled'],
  ])('a plan %s: %s', (_what, seen, kind, reason) => {
    const outcome = decideDependency({ kind: 'plan', plan: '/p', seen });
    expect(outcome.kind).toBe(kind);
    expect('reason' in outcome ? outcome.reason : '').toContain(reason);
  });

  it('a completed plan completes the dependent with { plan, state }', () => {
    expect(
      decideDependency({ kind: 'plan', plan: '/p', seen: { ...running, state: 'completed' } }),
    ).toEqual({ kind: 'done', value: { plan: '/p', state: 'completed' } });
  });

  it("a schedule's run: waits while the schedule or the tick's run is not there, follows the run's plan, fails when the tick was skipped or failed", () => {
    expect(decideDependency(tick({ scheduleMissing: true })).kind).toBe('wait');
    expect(decideDependency(tick({ tick: undefined })).kind).toBe('fail');
    expect(decideDependency(tick({})).kind).toBe('wait');
    expect(decideDependency(tick({ record: { state: 'pending' } })).kind).toBe('wait');
    expect(decideDependency(tick({ record: { state: 'skipped', reason: 'overlap' } }))).toEqual({
      kind: 'fail',
      reason: `schedule "nightly"'s run of 2026-11-26T02:30:00.000Z was skipped (overlap)`,
    });
    expect(decideDependency(tick({ record: { state: 'failed' } })).kind).toBe('fail');
    expect(
      decideDependency(tick({ record: { state: 'fired' }, plan: '/plans/n', seen: running })).kind,
    ).toBe('wait');
    expect(
      decideDependency(
        tick({
          record: { state: 'fired' },
          plan: '/plans/n',
          seen: { ...running, state: 'completed' },
        }),
      ),
    ).toEqual({
      kind: 'done',
      value: { plan: '/plans/n', state: 'completed', tick: '2026-11-26T02:30:00.000Z' },
    });
    // Fired, and its plan deleted since: whether it completed is not known.
    expect(
      decideDependency(
        tick({ record: { state: 'fired' }, plan: '/plans/n', seen: { exists: false } }),
      ).kind,
    ).toBe('fail');
  });
});

describe('checkTarget', () => {
  it('resolves a schedule run at a moment plus an offset, with the default parent and check interval', () => {
    expect(
      checkTarget({ schedule: 'nightly', at: '2026-11-27T02:30:00Z', offsetMs: -86_400_000 }, 't'),
    ).toEqual({
      kind: 'tick',
      schedule: 'nightly',
      schedules: '/schedules',
      at: TICK,
      checkEveryMs: 5_000,
    });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a list', ['/p']],
    ['both a plan and a schedule', { plan: '/p', schedule: 's', at: 1 }],
    ['a relative plan path', { plan: 'p' }],
    ['an unknown field', { plan: '/p', every: 1 }],
    ['a moment that is no time', { schedule: 's', at: 'soon' }],
    ['a fractional offset', { schedule: 's', at: 1, offsetMs: 0.5 }],
    ['a check every 0 ms', { plan: '/p', checkEveryMs: 0 }],
  ])('refuses %s with INVALID_ARGUMENT', (_what, value) => {
    expect(() => checkTarget(value, 'task t')).toThrow(InvalidArgumentError);
  });
});
