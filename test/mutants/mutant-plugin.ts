/**
 * The Vite plugin that applies a mutant (mutants.ts) while its vitest project loads src/: each
 * patched module exists only in that project's module graph, never on disk or in dist/.
 */
import { resolve } from 'node:path';
import type { Plugin } from 'vite';
import type { Mutant, MutantFile } from './mutants.js';

export function mutantPlugin(mutant: Mutant, root: string): Plugin {
  const targets = new Map<string, MutantFile>(mutant.files.map((target) => [resolve(root, target.file), target]));
  // A module listed twice would keep only its last patches here, and the others would silently not apply.
  if (targets.size !== mutant.files.length) throw new Error(`mutant ${mutant.name}: a module is listed more than once; give it one list of patches`);
  return {
    name: `zk-plan-mutant:${mutant.name}`,
    enforce: 'pre',
    transform(code, id) {
      // An id may carry a query after the path (`?v=…`).
      const target = targets.get(id.replace(/\?.*$/s, ''));
      if (target === undefined) return undefined;
      let patched = code;
      for (const { find, replace } of target.patches) {
        const at = patched.indexOf(find);
        if (at < 0 || patched.indexOf(find, at + 1) >= 0)
          throw new Error(`mutant ${mutant.name}: "${find}" is not in ${target.file} exactly once any more; update test/mutants/mutants.ts`);
        patched = patched.slice(0, at) + replace + patched.slice(at + find.length);
      }
      return { code: patched, map: null };
    },
  };
}
