import { expect } from 'vitest';

type ErrorClass<T> = abstract new (...args: never[]) => T;

/** Runs `run`, asserts it throws an instance of `ctor`, and returns the error for further checks. */
export function expectThrows<T extends Error>(run: () => unknown, ctor: ErrorClass<T>): T {
  let threw = false;
  let caught: unknown;
  try {
    run();
  } catch (error) {
    threw = true;
    caught = error;
  }
  if (!threw) throw new Error(`expected ${ctor.name} to be thrown, but nothing was thrown`);
  expect(caught).toBeInstanceOf(ctor);
  return caught as T;
}

/** Awaits `run`, asserts it rejects with an instance of `ctor`, and returns the error. */
export async function expectRejects<T extends Error>(
  run: () => Promise<unknown>,
  ctor: ErrorClass<T>,
): Promise<T> {
  let threw = false;
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    threw = true;
    caught = error;
  }
  if (!threw) throw new Error(`expected ${ctor.name} to be thrown, but the promise resolved`);
  expect(caught).toBeInstanceOf(ctor);
  return caught as T;
}
