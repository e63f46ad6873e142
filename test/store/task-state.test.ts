import { describe, expect, it } from 'vitest';
import { classifyTask, isClaimable, type TaskState } from '../../src/store/task-state.js';

describe('classifyTask', () => {
  describe('runnable', () => {
    it('is runnable when ready, with no dep-* and no owner', () => {
      expect(classifyTask(['ready'], 1)).toBe('runnable');
    });

    it('is runnable with propagated arg-* and prov-* children', () => {
      expect(
        classifyTask(['arg-0000000001', 'prov-0000000002', 'ready', 'arg-0000000003'], 7),
      ).toBe('runnable');
    });

    it('ignores non task-like children such as "quux" and "task-2345"', () => {
      expect(classifyTask(['task-2345', 'ready', 'quux'], 3)).toBe('runnable');
    });

    it('ignores dep-like names without a serial', () => {
      expect(classifyTask(['ready', 'dep-', 'dep-abc', 'deps'], 3)).toBe('runnable');
    });
  });

  describe('waiting', () => {
    it('is waiting when ready with a dep-* child', () => {
      expect(classifyTask(['ready', 'quux', 'dep-0000000001'], 3)).toBe('waiting');
    });

    it('is waiting with a mix of met (arg-*) and unmet (dep-*) inputs', () => {
      expect(classifyTask(['arg-0000000000', 'dep-0000000001', 'ready'], 4)).toBe('waiting');
    });
  });

  describe('owned', () => {
    it.each<[string[]]>([
      [['owner']],
      [['ready', 'owner']],
      [['ready', 'dep-0000000001', 'owner']],
      [['owner', 'result']],
      [['ready', 'result', 'owner']],
      [['quux', 'owner', 'task-2345']],
    ])('is owned whenever an owner is present: %j', (children) => {
      expect(classifyTask(children, 5)).toBe('owned');
    });
  });

  describe('finishable', () => {
    it('is finishable with a result and ready but no owner', () => {
      expect(classifyTask(['ready', 'result'], 5)).toBe('finishable');
    });

    it('is finishable with a result but neither ready nor owner', () => {
      expect(classifyTask(['result'], 9)).toBe('finishable');
    });

    it('is finishable with a result even if a dep-* is left', () => {
      expect(classifyTask(['result', 'dep-0000000001', 'ready'], 9)).toBe('finishable');
    });
  });

  describe('building', () => {
    it('is building when not ready', () => {
      expect(classifyTask(['dep-0000000001', 'prov-0000000002'], 2)).toBe('building');
      expect(classifyTask(['quux'], 1)).toBe('building');
      expect(classifyTask(['task-2345'], 1)).toBe('building');
    });

    it('is building with no children and cversion 0 (just created)', () => {
      expect(classifyTask([], 0)).toBe('building');
    });
  });

  describe('abandoned', () => {
    it('is abandoned with no children and cversion > 0', () => {
      expect(classifyTask([], 1)).toBe('abandoned');
      expect(classifyTask([], 12)).toBe('abandoned');
    });

    it('is abandoned with only late prov-* children left after its deletion began (cversion > children)', () => {
      // ready, result, owner… were deleted (cversion counts those changes) and an addTask's prov arrived late.
      expect(classifyTask(['prov-0000000007'], 9)).toBe('abandoned');
      expect(classifyTask(['prov-0000000007', 'prov-0000000008'], 3)).toBe('abandoned');
    });

    it('is still building with only prov-* children and nothing deleted yet (cversion = children)', () => {
      expect(classifyTask(['prov-0000000001'], 1)).toBe('building');
      expect(classifyTask(['prov-0000000001', 'prov-0000000002'], 2)).toBe('building');
    });

    it('is building, not abandoned, when anything but prov-* is left', () => {
      expect(classifyTask(['prov-0000000001', 'dep-0000000002'], 9)).toBe('building');
      expect(classifyTask(['prov-0000000001', 'arg-0000000002'], 9)).toBe('building');
      expect(classifyTask(['prov-'], 9)).toBe('building'); // no serial: not a prov node
    });

    it('takes a result or an owner over leftover provs', () => {
      expect(classifyTask(['prov-0000000001', 'result'], 9)).toBe('finishable');
      expect(classifyTask(['prov-0000000001', 'owner'], 9)).toBe('owned');
    });
  });

  describe('failed', () => {
    it('is failed with a failed child, even while its last owner still holds it', () => {
      expect(classifyTask(['ready', 'failed'], 3)).toBe('failed');
      expect(classifyTask(['ready', 'failed', 'owner', 'attempts'], 5)).toBe('failed');
      expect(classifyTask(['failed', 'result'], 5)).toBe('failed');
    });
  });

  it('does not depend on the order of the children', () => {
    expect(classifyTask(['dep-0000000001', 'ready'], 2)).toBe('waiting');
    expect(classifyTask(['result', 'ready'], 2)).toBe('finishable');
    expect(classifyTask(['quux', 'ready'], 2)).toBe('runnable');
  });
});

describe('isClaimable', () => {
  it('holds only for runnable and finishable', () => {
    const states: TaskState[] = [
      'runnable',
      'finishable',
      'owned',
      'failed',
      'waiting',
      'building',
      'abandoned',
    ];
    expect(states.filter((state) => isClaimable(state))).toEqual(['runnable', 'finishable']);
  });
});
