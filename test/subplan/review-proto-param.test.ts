/**
 * Review (defect 6): an input named `__proto__` once set the params' prototype instead of a param,
 * and the child spec then failed for good ("placeholder has no value"). Such a name is refused where
 * the sub-plan is written.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, subPlan } from '../../src/index.js';

describe('review: sub-plan param names', () => {
  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses the input name %s where the sub-plan is written',
    (name) => {
      expect(() =>
        subPlan({ spec: { tasks: { a: { fn: 'a' } } }, inputs: [name], result: 'a' }),
      ).toThrow(InvalidArgumentError);
      expect(() =>
        subPlan({ spec: { tasks: { a: { fn: 'a' } } }, inputs: [name], result: 'a' }),
      ).toThrow(`"${name}" cannot name a param`);
    },
  );
});
