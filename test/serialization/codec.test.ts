import superjson from 'superjson';
import { describe, expect, it } from 'vitest';
import { MalformedNodeError, UnserializableValueError } from '../../src/errors/task-errors.js';
import { assertSerializable, decodeValue, encodeValue } from '../../src/serialization/codec.js';
import { expectThrows } from '../support/expect-error.js';

const roundTrip = (value: unknown): unknown =>
  decodeValue('/plans/plan-0000000001/task-0000000001', encodeValue(value, 'value'));

describe('encodeValue / decodeValue round-trips', () => {
  it('round-trips a Date', () => {
    const date = new Date('2024-02-29T12:34:56.789Z');
    const decoded = roundTrip(date);
    expect(decoded).toBeInstanceOf(Date);
    expect((decoded as Date).getTime()).toBe(date.getTime());
  });

  it('round-trips a Map, with non-string keys', () => {
    const map = new Map<unknown, unknown>([
      ['a', 1],
      [2, 'two'],
      [true, [null]],
    ]);
    const decoded = roundTrip(map);
    expect(decoded).toBeInstanceOf(Map);
    expect(decoded).toEqual(map);
    expect([...(decoded as Map<unknown, unknown>).keys()]).toEqual(['a', 2, true]);
  });

  it('round-trips a Set, keeping insertion order', () => {
    const decoded = roundTrip(new Set([3, 'x', 1]));
    expect(decoded).toBeInstanceOf(Set);
    expect([...(decoded as Set<unknown>)]).toEqual([3, 'x', 1]);
  });

  it('round-trips a BigInt beyond the safe integer range', () => {
    const big = 2n ** 70n + 1n;
    expect(roundTrip(big)).toBe(big);
    expect(roundTrip(-5n)).toBe(-5n);
  });

  it('round-trips undefined at the top level', () => {
    expect(roundTrip(undefined)).toBeUndefined();
  });

  it('round-trips undefined nested inside objects and arrays', () => {
    const decoded = roundTrip({ a: undefined, b: [1, undefined, 3], c: { d: undefined } }) as {
      a: unknown;
      b: unknown[];
      c: Record<string, unknown>;
    };
    expect(Object.hasOwn(decoded, 'a')).toBe(true);
    expect(decoded.a).toBeUndefined();
    expect(decoded.b).toHaveLength(3);
    expect(decoded.b[1]).toBeUndefined();
    expect(Object.hasOwn(decoded.c, 'd')).toBe(true);
    expect(decoded).toStrictEqual({ a: undefined, b: [1, undefined, 3], c: { d: undefined } });
  });

  it('round-trips nested structures mixing special types', () => {
    const value = {
      list: [1, 'two', { three: new Date(3) }, [new Set([new Map([['k', 4n]])])]],
      map: new Map<string, unknown>([['inner', { date: new Date(0), tags: new Set(['a', 'b']) }]]),
      deep: { a: { b: { c: { d: [null, true, false, ''] } } } },
    };
    expect(roundTrip(value)).toStrictEqual(value);
  });

  it('round-trips a RegExp with its flags', () => {
    const decoded = roundTrip(/a+b\/c/gi);
    expect(decoded).toBeInstanceOf(RegExp);
    expect((decoded as RegExp).source).toBe('a+b\\/c');
    expect((decoded as RegExp).flags).toBe('gi');
  });

  it('round-trips NaN, Infinity, -Infinity and -0', () => {
    const decoded = roundTrip([
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      -0,
    ]) as number[];
    expect(decoded[0]).toBeNaN();
    expect(decoded[1]).toBe(Number.POSITIVE_INFINITY);
    expect(decoded[2]).toBe(Number.NEGATIVE_INFINITY);
    expect(Object.is(decoded[3], -0)).toBe(true);
  });

  it('round-trips a URL', () => {
    const decoded = roundTrip(new URL('https://example.com/a?b=1'));
    expect(decoded).toBeInstanceOf(URL);
    expect(String(decoded)).toBe('https://example.com/a?b=1');
  });

  it('accepts and round-trips the contents of a null-prototype object', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare['a'] = 1;
    bare['nested'] = { b: [2] };
    const decoded = roundTrip(bare) as Record<string, unknown>;
    expect(decoded['a']).toBe(1);
    expect(decoded['nested']).toEqual({ b: [2] });
    expect(Object.keys(decoded)).toEqual(['a', 'nested']);
  });

  it('round-trips plain JSON values', () => {
    for (const value of [null, 0, -1.5, 'text', '', true, false, [], {}, ['a', { b: 'c' }]]) {
      expect(roundTrip(value)).toStrictEqual(value);
    }
  });

  it('decodes superjson text given as a string as well as a Buffer', () => {
    const text = superjson.stringify({ when: new Date(1) });
    expect(decodeValue('/p', text)).toEqual({ when: new Date(1) });
    expect(decodeValue('/p', Buffer.from(text, 'utf8'))).toEqual({ when: new Date(1) });
  });
});

describe('encodeValue output', () => {
  it('is exactly superjson.stringify(value) as UTF-8', () => {
    const values: unknown[] = [
      { name: 'héllo € 😀', when: new Date(42), ids: new Set([1n, 2n]) },
      undefined,
      [1, undefined, new Map([['k', /x/]])],
      'plain',
    ];
    for (const value of values) {
      const encoded = encodeValue(value, 'value');
      expect(Buffer.isBuffer(encoded)).toBe(true);
      expect(encoded.equals(Buffer.from(superjson.stringify(value), 'utf8'))).toBe(true);
      expect(encoded.toString('utf8')).toBe(superjson.stringify(value));
    }
  });
});

describe('encodeValue rejects what superjson would drop or change', () => {
  class Client {
    connected = true;
  }

  it('rejects a function, naming its location', () => {
    const error = expectThrows(
      () => encodeValue([1, { client: () => 1 }], 'params'),
      UnserializableValueError,
    );
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.where).toBe('params');
    expect(error.message).toContain('params[1].client');
    expect(error.message).toContain('function');
  });

  it('rejects a top-level function', () => {
    const error = expectThrows(() => encodeValue(() => 1, 'result'), UnserializableValueError);
    expect(error.message).toContain('result is a function');
  });

  it('rejects a symbol value, naming its location', () => {
    const error = expectThrows(
      () => encodeValue({ a: { b: Symbol('s') } }, 'result'),
      UnserializableValueError,
    );
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.message).toContain('result.a.b');
    expect(error.message).toContain('symbol');
  });

  it('rejects a class instance, naming its location and class', () => {
    const error = expectThrows(
      () => encodeValue([0, { client: new Client() }], 'params'),
      UnserializableValueError,
    );
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.message).toContain('params[1].client');
    expect(error.message).toContain('Client');
  });

  it('rejects symbol keys, naming the object', () => {
    const error = expectThrows(
      () => encodeValue({ inner: { [Symbol('k')]: 1, ok: 2 } }, 'result'),
      UnserializableValueError,
    );
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.message).toContain('result.inner');
    expect(error.message).toContain('symbol keys');
  });

  it('rejects functions inside Maps and Sets, naming where they sit', () => {
    const inMap = expectThrows(
      () => encodeValue(new Map([['cb', () => 1]]), 'result'),
      UnserializableValueError,
    );
    expect(inMap.message).toContain('result.get(cb)');
    const inSet = expectThrows(
      () => encodeValue(new Set([1, Symbol('x')]), 'result'),
      UnserializableValueError,
    );
    expect(inSet.message).toContain('result<entry 1>');
  });

  it('sets `path` on the error when one is given', () => {
    const error = expectThrows(
      () => encodeValue(() => 1, 'result', '/p/plan-0000000001/task-0000000002'),
      UnserializableValueError,
    );
    expect(error.path).toBe('/p/plan-0000000001/task-0000000002');
  });

  it('assertSerializable accepts plain data without throwing', () => {
    expect(() =>
      assertSerializable(
        { a: [1, new Date(), new Map(), new Set(), /x/, 1n, null, undefined] },
        'value',
      ),
    ).not.toThrow();
  });
});

// assertSerializable promises to reject what superjson "would drop or change"; these values are changed.
describe('values superjson would silently change', () => {
  it('does not turn an invalid Date into null: rejects it or round-trips it as an invalid Date', () => {
    let decoded: unknown;
    try {
      decoded = roundTrip({ when: new Date(Number.NaN) });
    } catch (error) {
      expect(error).toBeInstanceOf(UnserializableValueError);
      return;
    }
    const when = (decoded as { when: unknown }).when;
    expect(when).toBeInstanceOf(Date);
    expect((when as Date).getTime()).toBeNaN();
  });

  it('does not turn a TypeError into a plain Error: rejects it or round-trips it as a TypeError', () => {
    let decoded: unknown;
    try {
      decoded = roundTrip(new TypeError('wrong type'));
    } catch (error) {
      expect(error).toBeInstanceOf(UnserializableValueError);
      return;
    }
    expect(decoded).toBeInstanceOf(TypeError);
    expect((decoded as Error).message).toBe('wrong type');
  });
});

describe('cyclic structures', () => {
  it('encodes a cyclic object without hanging and restores the cycle', () => {
    const node: Record<string, unknown> = { name: 'root', list: [] };
    node['self'] = node;
    (node['list'] as unknown[]).push(node);
    const decoded = roundTrip(node) as Record<string, unknown>;
    expect(decoded['name']).toBe('root');
    expect(decoded['self']).toBe(decoded);
    expect((decoded['list'] as unknown[])[0]).toBe(decoded);
  }, 5000);

  it('still finds a function inside a cycle', () => {
    const node: Record<string, unknown> = {};
    node['self'] = node;
    node['fn'] = () => 1;
    expectThrows(() => encodeValue(node, 'value'), UnserializableValueError);
  }, 5000);
});

describe('decodeValue rejects values zk-plan did not write', () => {
  const path = '/plans/plan-0000000001/task-0000000003';

  it.each<[string, Buffer | string | null | undefined]>([
    ['null data', null],
    ['undefined data', undefined],
    ['an empty buffer', Buffer.alloc(0)],
    ['an empty string', ''],
  ])('throws MalformedNodeError on %s', (_title, data) => {
    const error = expectThrows(() => decodeValue(path, data), MalformedNodeError);
    expect(error.code).toBe('MALFORMED_NODE');
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
  });

  it.each(['not json', '{"json": ', Buffer.from([0xff, 0xfe, 0x00])])(
    'throws MalformedNodeError on non-JSON %j',
    (data) => {
      const error = expectThrows(() => decodeValue(path, data), MalformedNodeError);
      expect(error.code).toBe('MALFORMED_NODE');
      expect(error.path).toBe(path);
      expect(error.cause).toBeInstanceOf(SyntaxError);
    },
  );

  it.each(['42', '"text"', 'null', '[1,2]', '{"a":1}', 'true'])(
    'throws MalformedNodeError on JSON that is not superjson: %s',
    (data) => {
      const error = expectThrows(() => decodeValue(path, Buffer.from(data)), MalformedNodeError);
      expect(error.code).toBe('MALFORMED_NODE');
      expect(error.path).toBe(path);
    },
  );
});

// superjson writes NaN, Infinity, -Infinity and -0 as text with a type tag; a plain JSON view
// would show them as null (or 0). They are kept exactly, or refused where superjson would lose them.
describe('non-finite numbers and -0 round-trip exactly, or are refused', () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0])(
    'round-trips %d at the top level and nested',
    (special) => {
      expect(Object.is(roundTrip(special), special)).toBe(true);
      const value = {
        params: [1, special],
        nested: { deep: [special] },
        set: new Set([special]),
        map: new Map([['k', special]]),
        again: special,
      };
      expect(roundTrip(value)).toStrictEqual(value);
      expect(Object.is((roundTrip([special]) as number[])[0], special)).toBe(true);
    },
  );

  it('keeps an Error next to a NaN', () => {
    const value = [Number.NaN, new Error('boom')];
    const decoded = roundTrip(value) as [number, Error];
    expect(decoded[0]).toBeNaN();
    expect(decoded[1].message).toBe('boom');
  });

  it('refuses NaN as a Map key (superjson drops the entry when a NaN comes before it), naming where it is', () => {
    const error = expectThrows(
      () => encodeValue([Number.NaN, new Map([[Number.NaN, 1]])], 'params'),
      UnserializableValueError,
    );
    expect(error.code).toBe('UNSERIALIZABLE_VALUE');
    expect(error.message).toContain('params[1] has NaN as a key');
    expect(
      expectThrows(
        () => assertSerializable(new Map([[Number.NaN, 1]]), 'params'),
        UnserializableValueError,
      ).message,
    ).toContain('params has NaN as a key');
  });

  it("shows them as text, not null, in the CLI's JSON and call column", async () => {
    const { formatCall, toJson } = await import('../../src/cli/output.js');
    expect(
      JSON.parse(
        toJson({ params: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] }),
      ),
    ).toEqual({
      params: ['NaN', 'Infinity', '-Infinity'],
    });
    expect(formatCall('f', [Number.NaN, Number.NEGATIVE_INFINITY])).toBe('f("NaN", "-Infinity")');
  });
});
