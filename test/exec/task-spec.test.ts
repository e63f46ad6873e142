import { describe, expect, it } from 'vitest';
import { MalformedNodeError, UnserializableValueError } from '../../src/errors/task-errors.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import {
  assertTaskSpec,
  call,
  inline,
  parseDefinition,
  toDefinition,
} from '../../src/exec/task-spec.js';
import { expectThrows } from '../support/expect-error.js';

const TASK = '/plans/plan-0000000001/task-0000000004';

describe('call', () => {
  it('builds a call spec with the name and params', () => {
    const when = new Date(5);
    expect(call('sum')).toEqual({ kind: 'call', fn: 'sum', params: [] });
    expect(call('etl.load', 1, 'two', { three: [3] }, when)).toEqual({
      kind: 'call',
      fn: 'etl.load',
      params: [1, 'two', { three: [3] }, when],
    });
  });

  it.each(['', '1abc', 'has space', 'semi;colon'])(
    'rejects the invalid function name %j with InvalidArgumentError',
    (name) => {
      const error = expectThrows(() => call(name), InvalidArgumentError);
      expect(error.code).toBe('INVALID_ARGUMENT');
    },
  );

  it('rejects a non-string name', () => {
    expectThrows(() => call(42 as unknown as string), InvalidArgumentError);
  });

  it('rejects a function param with UnserializableValueError naming the param', () => {
    const error = expectThrows(() => call('sum', 1, () => 2), UnserializableValueError);
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.message).toContain("params of call('sum')[1]");
  });

  it('rejects a class instance nested in a param', () => {
    class Pool {}
    const error = expectThrows(() => call('load', { db: new Pool() }), UnserializableValueError);
    expect(error.message).toContain('[0].db');
  });
});

describe('inline', () => {
  it('accepts an arrow function and stores its source', () => {
    const spec = inline((_ctx: unknown, a: number, b: number) => a * b + 7);
    expect(spec.kind).toBe('inline');
    expect(spec.source).toContain('=>');
    expect(spec.source).toContain('7');
  });

  it('accepts an async arrow function', () => {
    expect(inline(async () => 1).source).toMatch(/^async/);
  });

  it('accepts a function expression', () => {
    const spec = inline(function multiply(_ctx: unknown, a: number) {
      return a * 3;
    });
    expect(spec.source).toMatch(/^function multiply/);
  });

  it('rejects a method shorthand with InvalidArgumentError', () => {
    const holder = {
      method(a: number) {
        return a + 1;
      },
    };
    const error = expectThrows(() => inline(holder.method), InvalidArgumentError);
    expect(error.code).toBe('INVALID_ARGUMENT');
  });

  it('rejects a class method (also shorthand syntax)', () => {
    class Holder {
      run(a: number): number {
        return a;
      }
    }
    expectThrows(() => inline(Holder.prototype.run), InvalidArgumentError);
  });

  it('rejects a bound function', () => {
    const bound = ((a: number) => a).bind(null);
    expectThrows(() => inline(bound), InvalidArgumentError);
  });

  it('rejects a native function', () => {
    expectThrows(() => inline(Math.max), InvalidArgumentError);
  });

  it('rejects a non-function', () => {
    expectThrows(() => inline('() => 1' as never), InvalidArgumentError);
  });
});

describe('assertTaskSpec', () => {
  it('accepts specs built by call() and inline()', () => {
    expect(() => assertTaskSpec(call('sum', 1))).not.toThrow();
    expect(() => assertTaskSpec(inline(() => 1))).not.toThrow();
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'sum'],
    ['an object without kind', { fn: 'sum', params: [] }],
    ['an unknown kind', { kind: 'shell', command: 'ls' }],
    ['a call without params array', { kind: 'call', fn: 'sum', params: 'x' }],
    ['a call with an invalid name', { kind: 'call', fn: '9lives', params: [] }],
    ['an inline spec with empty source', { kind: 'inline', source: '' }],
    ['an inline spec with non-string source', { kind: 'inline', source: 5 }],
  ])('rejects %s with InvalidArgumentError', (_title, spec) => {
    expectThrows(() => assertTaskSpec(spec), InvalidArgumentError);
  });
});

describe('parseDefinition', () => {
  it('accepts { fn, params }', () => {
    expect(parseDefinition(TASK, { fn: 'sum', params: [1, 2] })).toEqual({
      fn: 'sum',
      params: [1, 2],
    });
  });

  it('defaults params to [] when { fn } has none', () => {
    expect(parseDefinition(TASK, { fn: 'sum' })).toEqual({ fn: 'sum', params: [] });
  });

  it('accepts { source }', () => {
    expect(parseDefinition(TASK, { source: '(ctx) => 1' })).toEqual({ source: '(ctx) => 1' });
  });

  it('keeps keepResult: true for fn and source definitions', () => {
    expect(parseDefinition(TASK, { fn: 'sum', params: [], keepResult: true })).toEqual({
      fn: 'sum',
      params: [],
      keepResult: true,
    });
    expect(parseDefinition(TASK, { source: '() => 1', keepResult: true })).toEqual({
      source: '() => 1',
      keepResult: true,
    });
  });

  it('keeps the task key (how people know the task) for fn and source definitions', () => {
    expect(parseDefinition(TASK, { fn: 'sum', params: [], key: 'load-eu' })).toEqual({
      fn: 'sum',
      params: [],
      key: 'load-eu',
    });
    expect(parseDefinition(TASK, { source: '() => 1', key: 'eu' })).toEqual({
      source: '() => 1',
      key: 'eu',
    });
  });

  it('drops keepResult: false', () => {
    const definition = parseDefinition(TASK, { fn: 'sum', params: [], keepResult: false });
    expect(definition).toEqual({ fn: 'sum', params: [] });
    expect('keepResult' in definition).toBe(false);
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'sum'],
    ['a number', 42],
    ['an array', [{ fn: 'sum' }]],
    ['an object without fn or source', { params: [] }],
    ['a non-string fn', { fn: 42, params: [] }],
    ['a non-string source', { source: 42 }],
    ['a non-array params (string)', { fn: 'sum', params: 'a,b' }],
    ['a non-array params (object)', { fn: 'sum', params: { 0: 1 } }],
    ['a non-boolean keepResult', { fn: 'sum', params: [], keepResult: 'yes' }],
    ['a numeric keepResult', { source: '() => 1', keepResult: 1 }],
    ['a non-string key', { fn: 'sum', params: [], key: 7 }],
    ['an empty key', { fn: 'sum', params: [], key: '' }],
  ])('rejects %s with MalformedNodeError naming the task', (_title, value) => {
    const error = expectThrows(() => parseDefinition(TASK, value), MalformedNodeError);
    expect(error.code).toBe('MALFORMED_NODE');
    expect(error.path).toBe(TASK);
    expect(error.message).toContain(TASK);
  });
});

describe('toDefinition', () => {
  it('stores fn and params of a call spec', () => {
    expect(toDefinition(call('sum', 1, 2))).toEqual({ fn: 'sum', params: [1, 2] });
  });

  it('stores the source of an inline spec', () => {
    expect(toDefinition({ kind: 'inline', source: '() => 1' })).toEqual({ source: '() => 1' });
  });

  it('adds keepResult only when true', () => {
    const kept = toDefinition(call('sum'), { keepResult: true });
    expect(kept).toEqual({ fn: 'sum', params: [], keepResult: true });
    const notKept = toDefinition(call('sum'));
    expect('keepResult' in notKept).toBe(false);
    expect(toDefinition({ kind: 'inline', source: '() => 1' }, { keepResult: true })).toEqual({
      source: '() => 1',
      keepResult: true,
    });
  });

  it('stores retry overrides and timeoutMs only when given', () => {
    expect(toDefinition(call('sum'), { retry: { maxAttempts: 5 }, timeoutMs: 100 })).toEqual({
      fn: 'sum',
      params: [],
      retry: { maxAttempts: 5 },
      timeoutMs: 100,
    });
    expect(toDefinition(call('sum'), { retry: {} })).toEqual({ fn: 'sum', params: [] });
  });

  it('rejects malformed retry and timeoutMs fields when parsing', () => {
    expect(() => parseDefinition(TASK, { fn: 'f', retry: 3 })).toThrow(/retry must be an object/);
    expect(() => parseDefinition(TASK, { fn: 'f', timeoutMs: -1 })).toThrow(
      /timeoutMs must be a number/,
    );
  });

  it('round-trips through parseDefinition', () => {
    for (const definition of [
      toDefinition(call('a.b', [1]), { keepResult: true, retry: { maxAttempts: 2 }, timeoutMs: 5 }),
      toDefinition({ kind: 'inline', source: '() => 2' }),
    ]) {
      expect(parseDefinition(TASK, definition)).toEqual(definition);
    }
  });
});
