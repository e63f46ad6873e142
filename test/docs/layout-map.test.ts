/**
 * docs/reference/layout.md is the map of the source: every folder under src/ and every command file
 * under src/cli/commands/, one table row each. A map that leaves out a folder (as the old one left
 * out src/jobs/) or names one that was moved or deleted misleads the newcomer it is written for, so
 * this test holds it to the tree, both ways. Unit test: reads files only.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const MAP = join(ROOT, 'docs', 'reference', 'layout.md');
const COMMANDS = 'src/cli/commands/';

/** Every folder under src/ (src/ itself left out), as `src/a/b/`. */
function sourceFolders(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return [`${relative(ROOT, path).split('\\').join('/')}/`, ...sourceFolders(path)];
    });
}

/** The command files: one file registers one command or a group of them (src/cli/program.ts). */
function commandFiles(): string[] {
  return readdirSync(join(ROOT, COMMANDS))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => `${COMMANDS}${name}`);
}

/** The paths the map's table rows start with: `| \`src/zk/\` | … |` gives `src/zk/`. */
function mappedPaths(): string[] {
  return readFileSync(MAP, 'utf8')
    .split('\n')
    .map((line) => /^\|\s*`(src\/[^`]*)`\s*\|/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);
}

/** Every `src/…` path the map mentions anywhere in code spans, rows or prose. */
function mentionedPaths(): string[] {
  return [...readFileSync(MAP, 'utf8').matchAll(/`(src\/[^`\s]*)`/g)].map(
    (match) => match[1] as string,
  );
}

describe('docs/reference/layout.md', () => {
  const rows = mappedPaths();

  it('has a row for every folder under src/', () => {
    const folders = sourceFolders();
    expect(folders).toContain('src/jobs/');
    expect(folders.filter((folder) => !rows.includes(folder))).toEqual([]);
  });

  it('has a row for every command file of src/cli/commands/', () => {
    const files = commandFiles();
    expect(files.length).toBeGreaterThanOrEqual(15);
    expect(files.filter((file) => !rows.includes(file))).toEqual([]);
  });

  it('has no row for a folder or command file that does not exist', () => {
    const folders = new Set(sourceFolders());
    const files = new Set(commandFiles());
    expect(rows.filter((row) => !(row.endsWith('/') ? folders.has(row) : files.has(row)))).toEqual(
      [],
    );
  });

  it('names no src/ path that does not exist', () => {
    expect(mentionedPaths().filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});
