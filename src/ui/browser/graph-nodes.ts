/**
 * The SVG elements of the plan graph's nodes: a task's box and a group's (closed: a stacked box
 * with its count and a bar of its states; open: a frame around its members with a header to
 * close it by). Text is set as text, never as markup.
 */
import type { TaskViewState, UiNode } from '../ui-wire.js';
import { svgEl } from './dom.js';
import { GROUP_H, GROUP_HEADER, GROUP_W, NODE_H, NODE_W, nodeText, type Size } from './graph.js';
import { barSegments, countsSummary, type TaskGroup } from './graph-groups.js';

export interface TaskElement {
  data: UiNode;
  readonly el: SVGGElement;
  readonly text: SVGTextElement;
  readonly title: SVGTitleElement;
}

export interface GroupElement {
  readonly group: TaskGroup;
  readonly el: SVGGElement;
  /** Drawn open (a frame) or closed (a box); undefined before the first drawing. */
  open: boolean | undefined;
}

/** The offset of a closed group's stacked cards. */
const STACK = 3;
const BAR_H = 9;
/** A closed group's longest title and counts line, in characters (its box fits this many). */
/** An open group's header holds about one character per this many graph units of its width. */
const HEADER_CHAR_W = 8;
const TITLE_CHARS = 20;
const COUNTS_CHARS = 25;

function cut(text: string, most: number): string {
  return text.length > most ? `${text.slice(0, most - 1)}\u2026` : text;
}

export function makeTaskElement(data: UiNode): TaskElement {
  const el = svgEl('g', { class: 'node', 'data-task': data.name, 'data-state': data.state });
  el.appendChild(svgEl('rect', { width: NODE_W, height: NODE_H, rx: 6 }));
  const text = svgEl('text', { x: 10, y: NODE_H / 2 + 4 });
  el.appendChild(text);
  const title = svgEl('title');
  el.appendChild(title);
  const entry: TaskElement = { data, el, text, title };
  updateTaskElement(entry, data);
  return entry;
}

export function updateTaskElement(entry: TaskElement, data: UiNode): void {
  entry.data = data;
  entry.el.setAttribute('data-state', data.state);
  entry.el.classList.toggle('gone', data.gone === true);
  entry.el.classList.toggle('cancelled', data.cancelled === true);
  if (data.key !== undefined) entry.el.dataset['key'] = data.key;
  entry.text.textContent = nodeText(data);
  const note = data.cancelled
    ? ' (deleted by the cancel)'
    : data.gone
      ? ' (finished; no record kept)'
      : '';
  const key = data.key !== undefined ? `${data.key} \u00b7 ` : '';
  entry.title.textContent = `${key}${data.name}${data.fn ? ` \u00b7 ${data.fn}` : ''} \u00b7 ${data.state}${note}`;
}

export function makeGroupElement(group: TaskGroup): GroupElement {
  const el = svgEl('g', { class: 'group', 'data-group': group.id });
  return { group, el, open: undefined };
}

/** '<fn> ×<count>', the function cut to fit. */
function groupTitle(group: TaskGroup): string {
  const count = ` \u00d7${group.members.length}`;
  const room = Math.max(4, TITLE_CHARS - count.length);
  const fn = group.fn.length > room ? `${group.fn.slice(0, room - 1)}\u2026` : group.fn;
  return `${fn}${count}`;
}

/** Redraws a group: its shape for `open` (framing `size`), its bar and counts, its tooltip. */
export function drawGroupElement(
  entry: GroupElement,
  open: boolean,
  size: Size,
  counts: Readonly<Record<TaskViewState, number>>,
): void {
  const { el, group } = entry;
  entry.open = open;
  el.textContent = '';
  el.classList.toggle('open', open);
  const summary = countsSummary(counts);
  if (open) {
    el.appendChild(
      svgEl('rect', { class: 'frame', width: size.width, height: size.height, rx: 8 }),
    );
    const header = svgEl('g', { class: 'group-header' });
    header.appendChild(
      svgEl('rect', { class: 'header-band', width: size.width, height: GROUP_HEADER - 4, rx: 8 }),
    );
    const title = svgEl('text', { class: 'group-title', x: 10, y: 16 });
    const room = Math.floor((size.width - 20) / HEADER_CHAR_W);
    const full = `\u25be ${groupTitle(group)} \u00b7 ${summary} \u00b7 click to close`;
    title.textContent =
      full.length <= room ? full : cut(`\u25be ${groupTitle(group)} \u00b7 close`, room);
    header.appendChild(title);
    el.appendChild(header);
  } else {
    const card = { width: GROUP_W - 2 * STACK, height: GROUP_H - 2 * STACK, rx: 6 };
    el.appendChild(svgEl('rect', { class: 'stack', x: 2 * STACK, y: 0, ...card }));
    el.appendChild(svgEl('rect', { class: 'stack', x: STACK, y: STACK, ...card }));
    el.appendChild(svgEl('rect', { class: 'box', x: 0, y: 2 * STACK, ...card }));
    const title = svgEl('text', { class: 'group-title', x: 9, y: 2 * STACK + 17 });
    title.textContent = `\u25b8 ${groupTitle(group)}`;
    el.appendChild(title);
    const barWidth = card.width - 16;
    const bar = svgEl('g', { class: 'bar', transform: `translate(8,${2 * STACK + 24})` });
    bar.appendChild(svgEl('rect', { class: 'bar-back', width: barWidth, height: BAR_H }));
    for (const segment of barSegments(counts, barWidth))
      bar.appendChild(
        svgEl('rect', {
          class: 'seg',
          'data-state': segment.state,
          x: segment.x,
          width: segment.width,
          height: BAR_H,
        }),
      );
    el.appendChild(bar);
    const line = svgEl('text', { class: 'group-counts', x: 9, y: 2 * STACK + 47 });
    line.textContent = cut(summary, COUNTS_CHARS);
    el.appendChild(line);
  }
  const tooltip = svgEl('title');
  const states = Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([state, count]) => `${count} ${state}`)
    .join(', ');
  tooltip.textContent = `${group.members.length} tasks running ${group.fn} on the same inputs, for the same dependents: ${states}. Click to ${open ? 'close' : 'open'}.`;
  el.appendChild(tooltip);
}
