import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { assertFunctionName } from '../../src/exec/function-name.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { expectThrows } from '../support/expect-error.js';

describe('FunctionRegistry', () => {
  it('starts empty', () => {
    const registry = new FunctionRegistry();
    expect(registry.size).toBe(0);
    expect(registry.names()).toEqual([]);
    expect(registry.has('sum')).toBe(false);
    expect(registry.get('sum')).toBeUndefined();
  });

  it('registers a function retrievable by get and has', () => {
    const sum = (_ctx: unknown, ...inputs: number[]) => inputs.reduce((a, b) => a + b, 0);
    const registry = new FunctionRegistry().register('sum', sum);
    expect(registry.has('sum')).toBe(true);
    expect(registry.get('sum')).toBe(sum);
    expect(registry.size).toBe(1);
  });

  it('returns itself from register, for chaining', () => {
    const registry = new FunctionRegistry();
    const returned = registry.register('a', () => 1);
    expect(returned).toBe(registry);
    registry.register('b', () => 2).register('c', () => 3);
    expect(registry.size).toBe(3);
  });

  it('lists names sorted, whatever the registration order', () => {
    const registry = new FunctionRegistry()
      .register('zeta', () => 0)
      .register('alpha', () => 0)
      .register('etl.load', () => 0)
      .register('Beta', () => 0);
    expect(registry.names()).toEqual(['Beta', 'alpha', 'etl.load', 'zeta']);
  });

  it('accepts names with letters, digits, _ $ . : / -', () => {
    const registry = new FunctionRegistry();
    for (const name of [
      'sum',
      '_private',
      '$dollar',
      'etl.load',
      'ns:fn',
      'pkg/fn',
      'kebab-case',
      'a1',
    ])
      registry.register(name, () => 0);
    expect(registry.size).toBe(8);
  });

  it("refuses 'shell', the built-in shell task function's name, with InvalidArgumentError saying so", () => {
    const registry = new FunctionRegistry();
    const error = expectThrows(() => registry.register('shell', () => 0), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain("'shell' is the built-in shell task function");
    expect(registry.has('shell')).toBe(false);
    expect(new FunctionRegistry().registerJob('shell', async () => undefined).jobNames()).toEqual([
      'shell',
    ]); // job functions have names of their own
  });

  it('rejects a duplicate name with InvalidArgumentError and keeps the first function', () => {
    const first = () => 1;
    const registry = new FunctionRegistry().register('sum', first);
    const error = expectThrows(() => registry.register('sum', () => 2), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('sum');
    expect(registry.get('sum')).toBe(first);
    expect(registry.size).toBe(1);
  });

  it.each<[string, unknown]>([
    ['empty', ''],
    ['starting with a digit', '1sum'],
    ['with a space', 'my fn'],
    ['with a semicolon', 'a;b'],
    ['non-string', 5],
    ['null', null],
  ])('rejects a name that is %s with InvalidArgumentError', (_title, name) => {
    const registry = new FunctionRegistry();
    const error = expectThrows(
      () => registry.register(name as string, () => 0),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(registry.size).toBe(0);
  });

  it.each<[string, unknown]>([
    ['a string', 'sum'],
    ['an object', {}],
    ['undefined', undefined],
  ])('rejects %s in place of a function with InvalidArgumentError', (_title, fn) => {
    const registry = new FunctionRegistry();
    const error = expectThrows(
      () => registry.register('sum', fn as () => unknown),
      InvalidArgumentError,
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(registry.has('sum')).toBe(false);
  });

  it('keeps registries independent', () => {
    const a = new FunctionRegistry().register('x', () => 0);
    const b = new FunctionRegistry();
    expect(b.has('x')).toBe(false);
    expect(() => b.register('x', () => 1)).not.toThrow();
    expect(a.size).toBe(1);
  });
});

describe('assertFunctionName', () => {
  it('accepts a valid name and rejects an invalid one', () => {
    expect(() => assertFunctionName('etl.load')).not.toThrow();
    expectThrows(() => assertFunctionName('-dash'), InvalidArgumentError);
  });
});
