/**
 * The task panel's log section: each try's last lines as kept in ZooKeeper (`/api/task-log`), read
 * again every second while the task may still log, with a link to download the log as text. Lines
 * are text nodes (never markup): a task's output is whatever it printed.
 */
import type { UiTaskLogTry } from '../ui-wire.js';
import { getJson } from './api.js';
import { h, when } from './dom.js';

/** How often a running task's log is read again. */
const LIVE_POLL_MS = 1_000;

export class TaskLogView {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private live = false;
  private stopped = false;
  private shown = '';

  constructor(readonly task: string) {
    this.element = h('section', undefined, 'log');
    this.element.id = 'detail-log';
    const head = h('h3', 'Log ');
    const download = h('a', 'download', 'download');
    download.href = `/api/task-log.txt?path=${encodeURIComponent(task)}`;
    download.setAttribute('download', '');
    head.appendChild(download);
    this.element.appendChild(head);
    this.body = h('div');
    this.element.appendChild(this.body);
    void this.load();
  }

  /** Live: read again every second (the task may still log); not live: one more read, then stop. */
  setLive(live: boolean): void {
    const wasLive = this.live;
    this.live = live;
    if (live && !wasLive) this.schedule();
    if (!live && wasLive) void this.load();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped || !this.live) return;
    this.timer = setTimeout(() => void this.load().finally(() => this.schedule()), LIVE_POLL_MS);
  }

  private async load(): Promise<void> {
    try {
      const tries = await getJson<UiTaskLogTry[]>(
        `/api/task-log?path=${encodeURIComponent(this.task)}`,
      );
      if (!this.stopped) this.render(tries);
    } catch (error) {
      if (!this.stopped)
        this.body.replaceChildren(
          h(
            'p',
            `Could not read the log: ${error instanceof Error ? error.message : String(error)}`,
            'hint',
          ),
        );
    }
  }

  private render(tries: readonly UiTaskLogTry[]): void {
    // Lines seen in all and tries ended: the same two numbers mean nothing new to draw (and the reader's scroll stays).
    const shown = `${tries.reduce((sum, entry) => sum + entry.lines.length + entry.droppedLines, 0)}/${tries.filter((entry) => entry.finishedAt !== undefined).length}`;
    if (shown === this.shown) return;
    this.shown = shown;
    if (tries.length === 0) {
      this.body.replaceChildren(
        h(
          'p',
          this.live
            ? 'Nothing logged yet.'
            : 'No log kept: the task logged nothing (or its worker keeps no task logs).',
          'hint',
        ),
      );
      return;
    }
    const parts = tries.map((entry) => tryPart(entry));
    this.body.replaceChildren(...parts);
    const last = parts.at(-1)?.querySelector('pre');
    if (last) last.scrollTop = last.scrollHeight; // the newest lines in view
  }
}

function tryPart(entry: UiTaskLogTry): HTMLElement {
  const part = h('div', undefined, 'try');
  part.dataset['attempt'] = String(entry.attempt);
  const ended = entry.finishedAt ? `ended ${when(entry.finishedAt) ?? ''}` : 'running';
  part.appendChild(
    h(
      'div',
      `Attempt ${entry.attempt} on ${entry.workerId}, started ${when(entry.startedAt) ?? ''}, ${ended}`,
      'try-head',
    ),
  );
  if (entry.truncated) {
    const served = entry.fullLog?.url !== undefined && /^https?:\/\//.test(entry.fullLog.url);
    const where =
      entry.fullLog && !served
        ? ` The whole log is on ${entry.fullLog.host} in ${entry.fullLog.location} (zk-plan logs --full there).`
        : '';
    const cap = entry.planCapReached ? ' The plan reached its log cap.' : '';
    const hint = h(
      'p',
      `${entry.droppedLines} earlier line(s) (${entry.droppedBytes} bytes) are not kept here.${cap}${where}`,
      'hint',
    );
    if (served && entry.fullLog?.url !== undefined) {
      // Served by the worker that wrote it (zk-plan worker --task-log-port), while it lives.
      const link = h('a', 'the whole log', 'full-log');
      link.href = entry.fullLog.url;
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
      hint.appendChild(document.createTextNode(' Read '));
      hint.appendChild(link);
      hint.appendChild(document.createTextNode(` from ${entry.fullLog.host}.`));
    }
    part.appendChild(hint);
  }
  const pre = h('pre', undefined, 'log-lines');
  for (const line of entry.lines) {
    const row = h('span', undefined, `line level-${line.level}`);
    row.appendChild(h('span', line.time.slice(11, 23), 'time'));
    row.appendChild(
      document.createTextNode(
        ` ${line.msg}${line.fields === undefined ? '' : ` ${JSON.stringify(line.fields)}`}\n`,
      ),
    );
    pre.appendChild(row);
  }
  part.appendChild(pre);
  return part;
}
