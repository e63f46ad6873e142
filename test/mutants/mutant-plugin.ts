/**
 * The Vite plugin that applies a mutant (mutants.ts) while its vitest project loads src/: the
 * patched module exists only in that project's module graph, never on disk or in dist/.
 */
import { resolve } from 'node:path';
import type { Plugin } from 'vite';
import type { Mutant } from './mutants.js';

export function mutantPlugin(mutant: Mutant, root: string): Plugin {
  const target = resolve(root, mutant.file);
  return {
    name: `zk-plan-mutant:${mutant.name}`,
    enforce: 'pre',
    transform(code, id) {
      if (id.split('?')[0] !== target) return undefined;
      let patched = code;
      for (const { find, replace } of mutant.patches) {
        const at = patched.indexOf(find);
        if (at < 0 || patched.indexOf(find, at + 1) >= 0)
          throw new Error(`mutant ${mutant.name}: "${find}" is not in ${mutant.file} exactly once any more; update test/mutants/mutants.ts`);
        patched = patched.slice(0, at) + replace + patched.slice(at + find.length);
      }
      return { code: patched, map: null };
    },
  };
}
