/**
 * Every default lives in one place, DEFAULTS (src/config/defaults.ts), and the options' doc comments
 * point there. A `@defaultValue` that spells a number or a string on its own is a second copy that
 * drifts (a default changed in DEFAULTS, a comment still promising the old one), so this test
 * refuses it: a default is written `@defaultValue DEFAULTS.<path> (<value>)`, and the value in
 * brackets, shown to readers of the generated reference and of an editor's hover, must be the one
 * DEFAULTS holds. `false` and `0` (an option that is off unless given) and words (`none`, `the
 * worker's`) need no entry. src/testing/ (the in-memory server's knobs) and src/cli/ (whose flags
 * show their defaults in `--help`, checked by test/docs/cli-guide.test.ts) are left out. Unit test:
 * reads files only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LEFT_OUT = ['src/testing/', 'src/cli/'];

interface DefaultTag {
  readonly where: string;
  readonly text: string;
}

function sourceFiles(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each tag's text, up to the end of its comment or of its line. */
function defaultTags(): DefaultTag[] {
  return sourceFiles().flatMap((path) => {
    const file = relative(ROOT, path).split('\\').join('/');
    if (LEFT_OUT.some((prefix) => file.startsWith(prefix))) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((line, index) => {
        const match = /@defaultValue\s+(.*?)\s*(\*\/|$)/.exec(line);
        return match?.[1] === undefined ? [] : [{ where: `${file}:${index + 1}`, text: match[1] }];
      });
  });
}

/** The value at a dotted path of DEFAULTS, or undefined when there is none. */
function defaultAt(path: string): unknown {
  let value: unknown = DEFAULTS;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

const UNITS: Readonly<Record<string, number>> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

/** What a value written for readers stands for: `60 000`, `16 MiB`, `'skip'`, `true`; undefined for words. */
function valueWritten(written: string): unknown {
  const quoted = /^'([^']*)'$/.exec(written);
  if (quoted !== null) return quoted[1];
  if (written === 'true' || written === 'false') return written === 'true';
  const number = /^(\d[\d ]*(?:\.\d+)?)(?: (KiB|MiB|GiB))?$/.exec(written);
  if (number?.[1] === undefined) return undefined;
  const unit = number[2] === undefined ? 1 : (UNITS[number[2]] ?? Number.NaN);
  return Number(number[1].replaceAll(' ', '')) * unit;
}

/** A literal of its own at the start of a tag: a number (other than 0) or a quoted string. */
function startsWithLiteral(text: string): boolean {
  if (/^0(\s|$)/.test(text)) return false;
  return /^(\d[\d ]*(\.\d+)?( (KiB|MiB|GiB))?|'[^']*'|"[^"]*")(\s*\(|\s*,|\s*$)/.test(text);
}

const tags = defaultTags();

describe('defaults live in DEFAULTS and the doc comments agree with it', () => {
  it('finds the options documented in src/ (the scan reaches them)', () => {
    expect(tags.length).toBeGreaterThan(60);
    expect(tags.some((tag) => tag.text.startsWith('DEFAULTS.jobs.leaseMs'))).toBe(true);
  });

  it('no @defaultValue spells a number or a string of its own', () => {
    const own = tags.filter((tag) => startsWithLiteral(tag.text));
    expect(own.map((tag) => `${tag.where}: @defaultValue ${tag.text}`)).toEqual([]);
  });

  it('every DEFAULTS.<path> a tag names exists, and the value beside it is the one DEFAULTS holds', () => {
    const wrong: string[] = [];
    for (const tag of tags) {
      for (const reference of tag.text.matchAll(
        /DEFAULTS\.([A-Za-z.]+[A-Za-z])(?: \(([^,)]+))?/g,
      )) {
        const [, path, written] = reference;
        if (path === undefined) continue;
        const held = defaultAt(path);
        if (held === undefined) {
          wrong.push(`${tag.where}: DEFAULTS.${path} does not exist`);
          continue;
        }
        // A value in brackets that is a value (not words such as `7 days`) must be DEFAULTS'.
        const value = written === undefined ? undefined : valueWritten(written.trim());
        if (value !== undefined && value !== held)
          wrong.push(
            `${tag.where}: says ${written} for DEFAULTS.${path}, which holds ${String(held)}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the checks catch what they are for: a bare literal, a wrong value, a missing path', () => {
    expect(startsWithLiteral('10000')).toBe(true);
    expect(startsWithLiteral("'skip'")).toBe(true);
    expect(startsWithLiteral('16 MiB')).toBe(true);
    expect(startsWithLiteral('0')).toBe(false);
    expect(startsWithLiteral('4 random bytes from node:crypto')).toBe(false);
    expect(startsWithLiteral('DEFAULTS.jobs.pollMs (5 000)')).toBe(false);
    expect(valueWritten('60 000')).toBe(60_000);
    expect(valueWritten('16 MiB')).toBe(16 * 1024 * 1024);
    expect(valueWritten("'fireOnce'")).toBe('fireOnce');
    expect(valueWritten('7 days')).toBeUndefined();
    expect(defaultAt('jobs.leaseMs')).toBe(DEFAULTS.jobs.leaseMs);
    expect(defaultAt('jobs.noSuchOption')).toBeUndefined();
  });
});
