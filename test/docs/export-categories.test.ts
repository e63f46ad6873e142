/**
 * src/index.ts groups the root exports under headed sections (plans and tasks, workers, control…,
 * errors), and the generated API reference (typedoc.json's categoryOrder) groups them the same way
 * through the `@category` tag of each export's doc comment. A new export without the tag would fall
 * into a catch-all group, and one moved to another section would be listed under the old one, so
 * this test holds every root export's tag to the section that exports it. Unit test: reads the
 * program with the TypeScript compiler, runs nothing.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const INDEX = join(ROOT, 'src', 'index.ts');

/** The category of each section of src/index.ts, by the words its header comment starts with. */
const SECTIONS: readonly (readonly [string, string])[] = [
  ['Plans and tasks', 'Plans and tasks'],
  ["The facade's sub-APIs", 'Sub-APIs'],
  ['Plan status and views', 'Plan status'],
  ['Workers', 'Workers'],
  ['Control', 'Control'],
  ['Limits', 'Limits'],
  ['Explain', 'Explain'],
  ['Events and alerts', 'Events and alerts'],
  ['Specs', 'Specs'],
  ['Snapshots', 'Snapshots'],
  ['Schedules', 'Schedules'],
  ['Jobs', 'Jobs'],
  ['Logs', 'Logs'],
  ['Configuration', 'Configuration'],
  ["The ZooKeeper client's types", 'ZooKeeper client'],
  ['Errors', 'Errors'],
];

interface ExportCategory {
  readonly name: string;
  /** The category of the section of src/index.ts that exports it. */
  readonly section: string | undefined;
  /** The `@category` tags of its declaration's doc comment. */
  readonly tagged: readonly string[];
}

function exportCategories(): ExportCategory[] {
  const program = ts.createProgram([INDEX], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(INDEX);
  if (index === undefined) throw new Error('src/index.ts is not in the program');
  const headers = SECTIONS.map(([words, category]) => {
    const at = index.text.indexOf(`// ${words}`);
    if (at < 0) throw new Error(`src/index.ts has no section headed "${words}"`);
    return { at, category };
  }).sort((a, b) => a.at - b.at);
  const sectionAt = (position: number): string | undefined =>
    headers.filter((header) => header.at < position).at(-1)?.category;

  return index.statements.flatMap((statement) => {
    if (!ts.isExportDeclaration(statement)) return [];
    const clause = statement.exportClause;
    if (clause === undefined || !ts.isNamedExports(clause)) return [];
    const section = sectionAt(statement.getStart(index));
    return clause.elements.map((element) => {
      let symbol = checker.getSymbolAtLocation(element.name);
      if (symbol !== undefined && (symbol.flags & ts.SymbolFlags.Alias) !== 0)
        symbol = checker.getAliasedSymbol(symbol);
      const declaration = symbol?.declarations?.[0];
      // A variable's doc comment belongs to its statement (`export const X = …`).
      const documented =
        declaration !== undefined && ts.isVariableDeclaration(declaration)
          ? declaration.parent.parent
          : declaration;
      const tagged =
        documented === undefined
          ? []
          : ts
              .getJSDocTags(documented)
              .filter((tag) => tag.tagName.text === 'category')
              .map((tag) => ts.getTextOfJSDocComment(tag.comment)?.trim() ?? '');
      return { name: element.name.text, section, tagged };
    });
  });
}

const exports = exportCategories();

describe('the API reference groups the root exports as src/index.ts does', () => {
  it('reads every root export (the count of api/zk-plan.api.md)', () => {
    expect(exports.length).toBeGreaterThan(200);
  });

  it('every export sits in a headed section and carries that section as its one @category', () => {
    const wrong = exports
      .filter((entry) => entry.tagged.length !== 1 || entry.tagged[0] !== entry.section)
      .map(
        (entry) =>
          `${entry.name}: exported under "${entry.section ?? 'no section'}", tagged ${entry.tagged.length === 0 ? 'with no @category' : entry.tagged.map((tag) => `@category ${tag}`).join(', ')}`,
      );
    expect(wrong).toEqual([]);
  });
});
