/**
 * Every code a caller may branch on is documented where a reader looks for it: the library's error
 * codes and classes in docs/reference/errors.md, the CLI's own codes in docs/guide/cli.md, the codes
 * of `why` in docs/guide/control.md, the web view's HTTP error codes in docs/guide/web-view.md. The
 * codes are read from the source, so a new one without its line in the docs fails here. Unit test:
 * reads files only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CredentialErrorCode } from '../../src/cli/credentials.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The .ts files under a folder of the repository, recursively, with their text. */
function sources(folder: string): { file: string; text: string }[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ file: `${folder}/${name}`, text: read(`${folder}/${name}`) }));
}

/** The names in `names` that `doc` does not hold as a code span. */
function undocumented(names: Iterable<string>, doc: string): string[] {
  return [...new Set(names)].filter((name) => !doc.includes(`\`${name}\``)).sort();
}

describe('error codes in the docs', () => {
  it('docs/reference/errors.md has every code and error class of src/errors/', () => {
    const errors = sources('src/errors');
    // Codes are string literals in upper snake case: `readonly code = 'X'`, the problem unions, ZooKeeper's names.
    const codes = errors.flatMap(({ text }) =>
      [...text.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)].map((match) => match[1] as string),
    );
    const classes = errors.flatMap(({ text }) =>
      [...text.matchAll(/export class (\w+)/g)].map((match) => match[1] as string),
    );
    expect(codes).toContain('PLAN_NOT_FOUND');
    expect(classes).toContain('ZkError');
    const doc = read('docs/reference/errors.md');
    expect(undocumented(codes, doc)).toEqual([]);
    expect(undocumented(classes, doc)).toEqual([]);
  });

  it("docs/guide/cli.md has every code of the CLI's own errors", () => {
    // The code is a CliError's or UsageError's last argument: `…, ExitCode.notFound, 'TASK_LOG_NOT_FOUND')`.
    const codes = sources('src/cli').flatMap(({ text }) =>
      [...text.matchAll(/,\s*'([A-Z][A-Z_]{3,})',?\s*\)/g)].map((match) => match[1] as string),
    );
    expect(codes).toContain('TASK_LOG_ELSEWHERE');
    expect(
      undocumented([...codes, ...Object.values(CredentialErrorCode)], read('docs/guide/cli.md')),
    ).toEqual([]);
  });

  it('docs/guide/control.md has every code of why (explainTask)', () => {
    const union =
      /export type ExplanationCode =([^;]*);/.exec(read('src/explain/explain-task.ts'))?.[1] ?? '';
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1] as string);
    expect(codes).toContain('OWNER_GONE');
    expect(undocumented(codes, read('docs/guide/control.md'))).toEqual([]);
  });

  it("docs/guide/web-view.md has every code of the web view's HTTP errors", () => {
    const thrown = sources('src/ui').flatMap(({ text }) =>
      [...text.matchAll(/new HttpError\(\s*\d+,\s*'([A-Z_]+)'/g)].map(
        (match) => match[1] as string,
      ),
    );
    // The refusals of the actions' Host and Origin check, answered as HttpErrors by their code.
    const refusals = /readonly code: ([^;]*);/.exec(read('src/ui/action-guard.ts'))?.[1] ?? '';
    const codes = [
      ...thrown,
      ...[...refusals.matchAll(/'([A-Z_]+)'/g)].map((match) => match[1] as string),
    ];
    expect(codes).toContain('UNAUTHORIZED');
    expect(codes).toContain('HOST_MISMATCH');
    expect(undocumented(codes, read('docs/guide/web-view.md'))).toEqual([]);
  });
});
