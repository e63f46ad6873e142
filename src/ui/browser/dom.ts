/**
 * DOM helpers of the pages. Every value from ZooKeeper goes into the page as text (`textContent`)
 * or as an attribute value (`setAttribute`), never as markup.
 */

import { formatAbsolute } from './time-format.js';
import { preferredZone } from './time-zone.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The element with this id; a page without it is a page of another version: fail loudly. */
export function byId<T extends Element = HTMLElement>(id: string, root: Document = document): T {
  const element = root.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as unknown as T;
}

/** A new element with text (as text) and a class. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string | number | null,
  className?: string,
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (text !== undefined && text !== null) element.textContent = String(text);
  if (className !== undefined) element.className = className;
  return element;
}

/** A new SVG element with attributes. */
export function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string | number>> = {},
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** Appends a `<dt>label</dt><dd>value</dd>` pair to a definition list; nothing for an empty value. */
export function definition(
  list: HTMLDListElement,
  label: string,
  value: string | number | Node | undefined | null,
): void {
  if (value === undefined || value === null || value === '') return;
  list.appendChild(h('dt', label));
  const dd = document.createElement('dd');
  if (value instanceof Node) dd.appendChild(value);
  else dd.textContent = String(value);
  list.appendChild(dd);
}

/** An ISO time in the zone the reader picked (time-zone.ts); undefined for none, the text itself when it is no date. */
export function when(iso: string | undefined): string | undefined {
  if (iso === undefined || iso === '') return undefined;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : formatAbsolute(date.getTime(), preferredZone());
}

/** A table cell with text (or empty, to fill) appended to a row. */
export function cell(
  row: HTMLTableRowElement,
  text?: string,
  className?: string,
): HTMLTableCellElement {
  const td = h('td', text, className);
  row.appendChild(td);
  return td;
}

/** A progress bar with its label: `{ percent, label }`. */
export function progressBar(percent: number, label: string): HTMLDivElement {
  const wrap = h('div', undefined, 'progress');
  const bar = h('div', undefined, 'bar');
  const fill = h('div');
  fill.style.width = `${percent}%`;
  bar.appendChild(fill);
  wrap.appendChild(bar);
  wrap.appendChild(h('span', label, 'progress-text'));
  return wrap;
}

/** The share done, in whole percent: a plan with no task is 100 % once completed. */
export function percentDone(done: number, total: number, state: string): number {
  return total > 0 ? Math.round((100 * done) / total) : state === 'completed' ? 100 : 0;
}

/** The page of a plan (`/plan?path=…`), with one of its tasks selected when `task` (`task-N`) is given. */
export function planTaskHref(plan: string, task?: string): string {
  const query = new URLSearchParams({ path: plan, ...(task === undefined ? {} : { task }) });
  return `/plan?${query.toString()}`;
}
