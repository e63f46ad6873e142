/**
 * Terminal escape injection: a task's failure message is whatever the task threw (or whoever may
 * write the plan stored), and `zk-plan show`, `wait` and the worker logs print it to a terminal.
 * A forged message that clears the screen, sets the window title, switches colours through the
 * 8-bit CSI or overwrites the line with `\r` must come out as its visible text only.
 */
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderPlanView } from '../../src/cli/commands/show.js';
import { formatTable, print, printJson } from '../../src/cli/output.js';
import { terminalLog } from '../../src/cli/worker-log.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { call } from '../../src/exec/task-spec.js';
import { createLogger, logWorkerEvents } from '../../src/observability/logger.js';
import type { ZkPlan } from '../../src/zk-plan.js';
import { MemoryZooKeeper } from '../../src/testing/index.js';
import { escapeJsonControls, hasControlCharacters, printable } from '../../src/util/printable.js';
import { FAST_BACKOFF, memoryProcess, type MemoryProcess } from '../support/memory-plan.js';

/** Clears the screen, sets the window title, turns red by C1 CSI, then overwrites the start of the line. */
const FORGED =
  'disk full\x1b[2J\x1b]0;you have been pwned\x07 on \x9b31mhost-7\x9b0m\rOK: all tasks done';
/** What is left of FORGED to read. */
const VISIBLE = 'disk full on host-7OK: all tasks done';

/** Every C0 control but line feed and tab, DEL, every C1 control: what must never reach the terminal. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

describe('printable', () => {
  it('removes escape sequences whole and every other control character, keeping the visible text', () => {
    expect(printable(FORGED)).toBe(VISIBLE);
    expect(printable('a\x1b[1;31mred\x1b[0m b')).toBe('ared b');
    expect(printable('a\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ b')).toBe('alink b'); // OSC 8 hyperlink, ESC \ terminated
    expect(printable('a\x9d0;title\x9cb')).toBe('ab'); // 8-bit OSC and ST
    expect(printable('a\x1bcb\x1b(0c')).toBe('abc'); // reset, charset switch
    expect(printable('bell\x07 nul\x00 bs\x08 del\x7f')).toBe('bell nul bs del');
    expect(printable('unterminated \x1b]0;title')).toBe('unterminated ');
    expect(printable('ünïcödé → ✓ 漢字')).toBe('ünïcödé → ✓ 漢字');
  });

  it('keeps line feeds and tabs of text laid out on purpose, or folds them into one line', () => {
    expect(printable('line one\r\n\tline two')).toBe('line one\n\tline two');
    expect(printable('line one\r\n\tline two\nthree', { multiline: false })).toBe(
      'line one ⏎ line two ⏎ three',
    );
    expect(printable('a\tb', { multiline: false })).toBe('a b');
  });

  it('leaves nothing to a terminal whatever the input', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 500; round += 1) {
      const text = Array.from({ length: 40 }, () =>
        String.fromCharCode(Math.floor(random() * 0xa0)),
      ).join('');
      expect(printable(text)).not.toMatch(CONTROL);
      expect(printable(text, { multiline: false })).not.toMatch(/[\x00-\x1f\x7f-\x9f]/); // eslint-disable-line no-control-regex
    }
  });

  it('escapeJsonControls writes DEL and C1 as \\u escapes, which JSON reads back as the same text', () => {
    const json = JSON.stringify({ message: FORGED });
    expect(json).toContain('\x9b'); // JSON.stringify escapes C0 only
    const escaped = escapeJsonControls(json);
    expect(escaped).not.toMatch(CONTROL);
    expect(JSON.parse(escaped)).toEqual({ message: FORGED });
    expect(hasControlCharacters(FORGED)).toBe(true);
    expect(hasControlCharacters(VISIBLE)).toBe(false);
  });
});

describe('what the CLI prints', () => {
  const processes: MemoryProcess[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(processes.splice(0).map(({ zkPlan }) => zkPlan.close()));
  });

  it("show's table of a plan whose task failed with a forged message: no control character, the message's text intact", async () => {
    const server = new MemoryZooKeeper();
    const functions = new FunctionRegistry().register('boom', () => {
      throw new Error(FORGED);
    });
    const worker = memoryProcess(server, 'worker', functions);
    processes.push(worker);
    const plan = await worker.zkPlan.createPlan('/plans', { maxAttempts: 1 });
    await worker.zkPlan.addTask(plan, call('boom', 'param\x1b[2J'));
    await worker.zkPlan.markAsReady(plan);
    worker.zkPlan.startWorkers('/plans', { backoff: FAST_BACKOFF, retention: false });
    await expect(
      worker.zkPlan.waitForCompletion(plan, { timeoutMs: 10_000 }),
    ).rejects.toMatchObject({ code: 'PLAN_FAILED' });

    const view = await worker.zkPlan.plans.describe(plan);
    expect(view.tasks[0]?.failure?.message).toContain(FORGED); // stored as thrown
    const shown = renderPlanView(view, 400);
    expect(shown).not.toMatch(CONTROL);
    expect(shown).toContain(VISIBLE);
    expect(shown).toContain('boom("param\\u001b[2J")'); // the call's params are shown as JSON

    // wait's error table goes through the same formatTable
    const table = formatTable(
      [{ error: `Error: ${FORGED}` }],
      [{ header: 'ERROR', value: (row) => row.error }],
    );
    expect(table).not.toMatch(CONTROL);
    expect(table).toContain(VISIBLE);
  });

  it('print and printJson, the printing boundary of every command, let no control character through', () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    print(`why: ${FORGED}`);
    printJson({ failure: { message: FORGED } });
    vi.restoreAllMocks();
    expect(written[0]).toBe(`why: ${VISIBLE}\n`);
    expect(written[1]).not.toMatch(CONTROL);
    expect(JSON.parse(written[1] ?? '')).toEqual({ failure: { message: FORGED } }); // JSON keeps the exact value, escaped
  });

  it('the plain and pretty worker logs: one line per event, forged messages, keys and names as their visible text', () => {
    for (const format of ['plain', 'pretty'] as const) {
      const lines: string[] = [];
      const zkPlan = Object.assign(new EventEmitter(), { zk: new EventEmitter() });
      const log = terminalLog('info', { format, writeLine: (line) => lines.push(line) });
      const stop = log.follow(zkPlan as unknown as ZkPlan);
      const task = '/plans/plan-0000000001/task-0000000002';
      const error = new Error(FORGED);
      error.stack = `Error: ${FORGED}\n    at job (/app/${FORGED}.js:1:2)`;
      const labels = { key: `eu${FORGED}`, fn: 'load', planName: `nightly\n${FORGED}` };
      zkPlan.emit('task:started', {
        task,
        plan: '/plans/plan-0000000001',
        workerId: 'host:1:1',
        attempt: 1,
        ...labels,
      });
      zkPlan.emit('task:failed', {
        task,
        plan: '/plans/plan-0000000001',
        workerId: 'host:1:1',
        error,
        charged: true,
        final: true,
        attempt: 1,
        ...labels,
      });
      zkPlan.emit('worker:error', { workerId: 'evil\x1b[2J', error: new Error('two\nlines') });
      stop();
      const prefix = format === 'plain' ? 'zk-plan worker: ' : '';
      const named = `${task} (key eu${VISIBLE}, fn load, plan nightly ⏎ ${VISIBLE})`;
      expect(
        lines.map((line) =>
          format === 'plain' ? line : line.replace(/^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO |ERROR) /, ''),
        ),
      ).toEqual([
        `${prefix}task started: ${named}, attempt 1`,
        `${prefix}task failed for good: ${named}, attempt 1: ${VISIBLE}\n    at job (/app/${VISIBLE}.js:1:2)`,
        `${prefix}worker error on evil: two ⏎ lines`,
      ]);
      for (const line of lines) expect(line).not.toMatch(CONTROL);
    }
  });

  it('a pretty structured log (createLogger) prints the visible text; JSON logs keep the exact value with every control escaped', async () => {
    const logged = (pretty: boolean): Promise<string> => {
      let text = '';
      const destination = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          text += String(chunk);
          callback();
        },
      });
      const logger = createLogger({ pretty, destination });
      const zkPlan = Object.assign(new EventEmitter(), {
        zk: Object.assign(new EventEmitter(), { state: 'connected' }),
      });
      const stop = logWorkerEvents(zkPlan as unknown as ZkPlan, logger);
      const error = new Error(FORGED);
      zkPlan.emit('task:failed', {
        plan: '/plans/plan-1',
        task: '/plans/plan-1/task-2',
        workerId: 'w',
        error,
        charged: true,
        final: true,
        attempts: 1,
      });
      stop();
      return new Promise((resolve) => setImmediate(() => resolve(text)));
    };
    const pretty = await logged(true);
    expect(pretty).not.toMatch(CONTROL);
    expect(pretty).toContain(`task failed for good: /plans/plan-1/task-2: ${VISIBLE}`);

    const json = await logged(false);
    expect(json).not.toMatch(CONTROL);
    const line = JSON.parse(json) as { msg: string; error: { message: string } };
    expect(line.msg).toBe(`task failed for good: /plans/plan-1/task-2: ${FORGED}`);
    expect(line.error.message).toBe(FORGED);
  });
});
