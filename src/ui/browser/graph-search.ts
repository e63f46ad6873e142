/**
 * The graph toolbar's search, pure (no DOM): which tasks a query finds and in what order Enter
 * visits them. Case is ignored. The best matches come first, so the first centred task is the
 * one meant: an exact key or serial, then keys starting with the query, then keys, names or
 * serials containing it, then an exact function, then functions containing it. Within a rank,
 * tasks keep the order they were given (the wire's order, by name).
 */
import type { UiNode } from '../ui-wire.js';
import { shortLabel } from './graph.js';

export type SearchableNode = Pick<UiNode, 'name' | 'key' | 'fn'>;

/** Searches longer than this are cut: a task's key is at most a few hundred characters. */
const MAX_QUERY = 200;

function rank(node: SearchableNode, query: string): number | undefined {
  const key = node.key?.toLowerCase();
  const name = node.name.toLowerCase();
  const serial = shortLabel(node.name).toLowerCase();
  const fn = node.fn.toLowerCase();
  if (key === query || name === query || serial === query || serial === `#${query}`) return 0;
  if (key?.startsWith(query) === true) return 1;
  if (key?.includes(query) === true || name.includes(query) || serial.includes(query)) return 2;
  if (fn === query) return 3;
  if (fn.includes(query)) return 4;
  return undefined;
}

/** The names of the tasks `query` finds, best first; none for a blank query. */
export function searchTasks(nodes: readonly SearchableNode[], query: string): string[] {
  const wanted = query.trim().slice(0, MAX_QUERY).toLowerCase();
  if (wanted === '') return [];
  const ranked: { name: string; rank: number; index: number }[] = [];
  for (const [index, node] of nodes.entries()) {
    const found = rank(node, wanted);
    if (found !== undefined) ranked.push({ name: node.name, rank: found, index });
  }
  ranked.sort((a, b) => a.rank - b.rank || a.index - b.index);
  return ranked.map((entry) => entry.name);
}
