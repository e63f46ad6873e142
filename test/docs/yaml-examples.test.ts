/**
 * Every YAML block of the documentation is a file the CLI accepts: parsed as `zk-plan` parses a
 * .yaml file, then checked by what `submit`/`validate`, `schedule put` or `jobs define` check. Each
 * block says which it is on the line before it, `<!-- check-yaml: spec|schedule|job [name=value …] -->`
 * (the values fill a spec's `{ $param: name }` placeholders, as `--param` does); a block without the
 * marker fails, so no example goes unchecked. Unit test: no server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseParams } from '../../src/cli/documents.js';
import { resolveJob, type JobDefinition } from '../../src/jobs/job-definition.js';
import { resolveSchedule, type ScheduleInput } from '../../src/schedule/schedule-definition.js';
import { checkPlanSpec } from '../../src/spec/plan-spec.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** README.md, CONTRIBUTING.md and docs/**\/*.md: the files scripts/check-docs.mjs checks. */
function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name));
  return [join(ROOT, 'README.md'), join(ROOT, 'CONTRIBUTING.md'), ...docs];
}

interface YamlBlock {
  readonly where: string;
  readonly text: string;
  /** The marker's words: the kind, then name=value params. */
  readonly marker: readonly string[] | undefined;
}

/** The ```yaml blocks of a Markdown file, each with the check-yaml marker on the last non-blank line before it. */
function yamlBlocks(file: string): YamlBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: YamlBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!/^```ya?ml\s*$/.test(lines[index] as string)) continue;
    const end = lines.indexOf('```', index + 1);
    let before = index - 1;
    while (before >= 0 && (lines[before] as string).trim() === '') before--;
    const marker = /^<!--\s*check-yaml:\s*(.*?)\s*-->$/
      .exec((lines[before] ?? '').trim())?.[1]
      ?.split(/\s+/);
    blocks.push({
      where: `${relative(ROOT, file)}:${index + 1}`,
      text: lines.slice(index + 1, end).join('\n'),
      marker,
    });
    index = end;
  }
  return blocks;
}

/** Checks a block as the CLI would: throws what the command would report. */
function check(kind: string, document: unknown, params: Record<string, unknown>): void {
  if (kind === 'spec') checkPlanSpec(document, { registered: [], params });
  else if (kind === 'schedule')
    resolveSchedule(document as ScheduleInput, undefined, Date.parse('2026-11-26T12:00:00Z'), []);
  else if (kind === 'job') resolveJob(document as JobDefinition, new Date());
  else throw new Error(`unknown check-yaml kind "${kind}": spec, schedule or job`);
}

describe('the YAML examples of the docs', () => {
  const blocks = documentationFiles().flatMap(yamlBlocks);

  it('are there, each marked with what it is', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    expect(
      blocks.filter((block) => block.marker === undefined).map((block) => block.where),
    ).toEqual([]);
  });

  it.each(
    blocks
      .filter((block) => block.marker !== undefined)
      .map((block) => [block.where, block] as const),
  )('%s is valid', (_where, block) => {
    const [kind, ...pairs] = block.marker as readonly string[];
    expect(() =>
      check(kind as string, parse(block.text) as unknown, parseParams(pairs)),
    ).not.toThrow();
  });
});
