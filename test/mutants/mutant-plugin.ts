/**
 * The Vite plugin that applies a mutant (mutants.ts) while its vitest project loads src/: each
 * patched module exists only in that project's module graph, never on disk or in dist/.
 */
import { resolve } from 'node:path';
import type { Plugin } from 'vite';
import type { Mutant, MutantFile } from './mutants.js';

export function mutantPlugin(mutant: Mutant, root: string): Plugin {
  const targets = new Map<string, MutantFile>(
    mutant.files.map((target) => [resolve(root, target.file), target]),
  );
  // A module listed twice would keep only its last patches here, and the others would silently not apply.
  if (targets.size !== mutant.files.length)
    throw new Error(
      `mutant ${mutant.name}: a module is listed more than once; give it one list of patches`,
    );
  return {
    name: `zk-plan-mutant:${mutant.name}`,
    enforce: 'pre',
    transform(code, id) {
      // An id may carry a query after the path (`?v=…`).
      const target = targets.get(id.replace(/\?.*$/s, ''));
      if (target === undefined) return undefined;
      let patched = code;
      for (const { find, replace } of target.patches) {
        const matches = [...patched.matchAll(layoutFreePattern(find))];
        const [match] = matches;
        if (match === undefined || matches.length > 1)
          throw new Error(
            `mutant ${mutant.name}: "${find}" is not in ${target.file} exactly once any more; update test/mutants/mutants.ts`,
          );
        patched =
          patched.slice(0, match.index) + replace + patched.slice(match.index + match[0].length);
      }
      return { code: patched, map: null };
    },
  };
}

/**
 * A pattern that finds `text` in a module however the formatter has laid it out: any whitespace
 * (line breaks and indentation included) may stand between two characters, and a trailing comma
 * before a closing bracket (which the formatter adds when it wraps a call) is allowed. So a mutant
 * survives a reformat of its module, and still fails loudly when its code is really gone.
 */
function layoutFreePattern(text: string): RegExp {
  const compact = text.replace(/\s+/g, '').replace(/,([)\]}])/g, '$1');
  let pattern = '';
  for (const character of compact) {
    if (')]}'.includes(character)) pattern += ',?\\s*';
    pattern += `${character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*`;
  }
  // Whitespace after the text is not part of it: the replacement must not swallow a line break.
  return new RegExp(pattern.replace(/\\s\*$/, ''), 'g');
}
