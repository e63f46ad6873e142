import { describe, expect, it } from 'vitest';
import { ClaimBook, RECENTLY_DONE_LIMIT } from '../../src/worker/claim-book.js';

const PLAN = '/p/plan-0000000001';
const task = (n: number, plan = PLAN): string => `${plan}/task-${String(n).padStart(10, '0')}`;

describe('ClaimBook', () => {
  it('lets one loop reserve a task; another loop cannot until it is released', () => {
    const book = new ClaimBook();
    expect(book.reserve(task(1))).toBe(true);
    expect(book.reserve(task(1))).toBe(false);
    expect(book.isHeld(task(1))).toBe(true);
    expect(book.heldCount).toBe(1);
    book.release(task(1));
    expect(book.isHeld(task(1))).toBe(false);
    expect(book.reserve(task(1))).toBe(true);
  });

  it('remembers a task released as completed as done, not held', () => {
    const book = new ClaimBook();
    book.reserve(task(1));
    book.release(task(1), true);
    expect(book.isHeld(task(1))).toBe(false);
    expect(book.isHeldOrDone(task(1))).toBe(true);
    expect(book.doneCount).toBe(1);
    // A release that is not a completion does not mark it done.
    book.reserve(task(2));
    book.release(task(2));
    expect(book.isHeldOrDone(task(2))).toBe(false);
  });

  it('forgets "done" when the task is offered again (its retry delay is over)', () => {
    const book = new ClaimBook();
    book.release(task(1), true);
    book.reoffered(task(1));
    expect(book.isHeldOrDone(task(1))).toBe(false);
    expect(book.doneCount).toBe(0);
  });

  it('keeps at most doneLimit finished tasks, dropping the oldest first', () => {
    const book = new ClaimBook(3);
    for (let n = 1; n <= 5; n++) book.release(task(n), true);
    expect(book.doneCount).toBe(3);
    expect([1, 2, 3, 4, 5].map((n) => book.isHeldOrDone(task(n)))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('counts a task finished again as the newest (it is kept longest)', () => {
    const book = new ClaimBook(2);
    book.release(task(1), true);
    book.release(task(2), true);
    book.release(task(1), true); // done again: moves to the end
    book.release(task(3), true);
    expect([1, 2, 3].map((n) => book.isHeldOrDone(task(n)))).toEqual([true, false, true]);
  });

  it('defaults to RECENTLY_DONE_LIMIT', () => {
    const book = new ClaimBook();
    for (let n = 0; n <= RECENTLY_DONE_LIMIT; n++) book.release(task(n), true);
    expect(book.doneCount).toBe(RECENTLY_DONE_LIMIT);
    expect(book.isHeldOrDone(task(0))).toBe(false);
  });

  it('forgetPlan drops the finished tasks of that plan only, and never a held one', () => {
    const other = '/p/plan-0000000002';
    const book = new ClaimBook();
    book.release(task(1), true);
    book.release(task(2, other), true);
    book.reserve(task(3));
    book.forgetPlan(PLAN);
    expect(book.isHeldOrDone(task(1))).toBe(false);
    expect(book.isHeldOrDone(task(2, other))).toBe(true);
    expect(book.isHeld(task(3))).toBe(true);
  });

  it("forgetPlan does not take a plan for a prefix of another plan's name", () => {
    const book = new ClaimBook();
    book.release(`${PLAN}0/task-0000000001`, true);
    book.forgetPlan(PLAN);
    expect(book.doneCount).toBe(1);
  });
});
