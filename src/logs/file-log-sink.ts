/**
 * The shipped LogSink: one file of JSON lines per try, under
 * `<dir>/<parent, URI-encoded>/<plan-N>/<task-N>/<try>.jsonl`, each file capped (past the cap one
 * last line says how much was left out), the whole directory capped too (the oldest plans go first),
 * and plans that no longer exist in ZooKeeper removed by `prune`.
 */
import { DEFAULTS } from '../config/defaults.js';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPath, isPlanName, nameOf, parentOf } from '../zk/layout.js';
import type { LogSink, TryIdentity, TrySink } from './log-sink.js';
import type { LogLine } from './task-log-types.js';

/**
 * Options of FileLogSink: where the files go and how much they may take.
 *
 * @category Logs
 */
export interface FileLogSinkOptions {
  /** Directory of the files. @defaultValue `<os tmpdir>/zk-plan-logs` */
  readonly dir?: string;
  /** Largest file of one try, in bytes; later lines are counted, not written. @defaultValue DEFAULTS.fileLogSink.maxBytesPerTry (16 MiB) */
  readonly maxBytesPerTry?: number;
  /** Largest size of the whole directory, in bytes, checked by `prune`: the plans written longest ago go first. @defaultValue DEFAULTS.fileLogSink.maxBytesTotal (1 GiB) */
  readonly maxBytesTotal?: number;
}

export function defaultLogDir(): string {
  return join(tmpdir(), 'zk-plan-logs');
}

/**
 * The LogSink workers use by default (`zk-plan worker --log-dir`): one file of JSON lines per try
 * under `dir`, each file and the whole directory capped, the files of deleted plans pruned. Serve
 * them to other hosts with startLogServer.
 *
 * @category Logs
 */
export class FileLogSink implements LogSink {
  /** The directory of the files. */
  readonly dir: string;
  private readonly maxBytesPerTry: number;
  private readonly maxBytesTotal: number;
  private urlOf: ((file: string) => string) | undefined;

  constructor(options: FileLogSinkOptions = {}) {
    this.dir = options.dir ?? defaultLogDir();
    this.maxBytesPerTry = options.maxBytesPerTry ?? DEFAULTS.fileLogSink.maxBytesPerTry;
    this.maxBytesTotal = options.maxBytesTotal ?? DEFAULTS.fileLogSink.maxBytesTotal;
  }

  /** The file of a try (the layout above). */
  fileOf(identity: Pick<TryIdentity, 'plan' | 'task' | 'tryName'>): string {
    return join(this.planDir(identity.plan), nameOf(identity.task), `${identity.tryName}.jsonl`);
  }

  /** The directory of a plan's files. */
  planDir(plan: string): string {
    return join(this.dir, encodeURIComponent(parentOf(plan)), nameOf(plan));
  }

  open(identity: TryIdentity): TrySink {
    const file = this.fileOf(identity);
    return new FileTrySink(file, this.maxBytesPerTry, this.urlOf?.(file));
  }

  /** Set by a log server (startLogServer) while it serves this sink's files: the URL of a file, stored in its try's record. */
  serveAt(urlOf: ((file: string) => string) | undefined): void {
    this.urlOf = urlOf;
  }

  async prune(planExists: (plan: string) => Promise<boolean>): Promise<void> {
    const plans = await this.listPlans();
    const kept: { dir: string; bytes: number; modified: number }[] = [];
    for (const { plan, dir } of plans) {
      if (!(await planExists(plan))) {
        await rm(dir, { recursive: true, force: true });
        continue;
      }
      kept.push({ dir, ...(await sizeOf(dir)) });
    }
    let total = kept.reduce((sum, { bytes }) => sum + bytes, 0);
    for (const { dir, bytes } of kept.sort((a, b) => a.modified - b.modified)) {
      if (total <= this.maxBytesTotal) break;
      await rm(dir, { recursive: true, force: true });
      total -= bytes;
    }
  }

  private async listPlans(): Promise<{ plan: string; dir: string }[]> {
    const parents = await readdir(this.dir).catch(() => [] as string[]);
    const plans: { plan: string; dir: string }[] = [];
    for (const encoded of parents) {
      let parent: string;
      try {
        parent = decodeURIComponent(encoded);
      } catch {
        continue; // not a directory this sink made
      }
      if (!parent.startsWith('/')) continue;
      const names = await readdir(join(this.dir, encoded)).catch(() => [] as string[]);
      for (const name of names.filter(isPlanName))
        plans.push({ plan: childPath(parent, name), dir: join(this.dir, encoded, name) });
    }
    return plans;
  }
}

/** Bytes of the files under `dir` and the latest change among them. */
async function sizeOf(dir: string): Promise<{ bytes: number; modified: number }> {
  let bytes = 0;
  let modified = 0;
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const info = await stat(join(entry.parentPath, entry.name)).catch(() => undefined);
    if (info === undefined) continue;
    bytes += info.size;
    modified = Math.max(modified, info.mtimeMs);
  }
  return { bytes, modified };
}

class FileTrySink implements TrySink {
  private stream: WriteStream | undefined;
  private readonly ready: Promise<void>;
  private written = 0;
  private leftOut = 0;
  private failed = false;

  constructor(
    readonly location: string,
    private readonly maxBytes: number,
    readonly url: string | undefined,
  ) {
    this.ready = mkdir(join(location, '..'), { recursive: true }).then(
      () => {
        this.stream = createWriteStream(location, { flags: 'a' });
        this.stream.on('error', () => {
          this.failed = true; // a full disk must not fail the task: the tail in ZooKeeper still holds the last lines
        });
      },
      () => {
        this.failed = true;
      },
    );
  }

  write(line: LogLine): void {
    const text = `${JSON.stringify({ ...line, time: line.time.toISOString() })}\n`;
    const bytes = Buffer.byteLength(text);
    if (this.written + bytes > this.maxBytes) {
      this.leftOut += 1;
      return;
    }
    this.written += bytes;
    void this.ready.then(() => {
      if (!this.failed) this.stream?.write(text);
    });
  }

  async close(): Promise<void> {
    await this.ready;
    const stream = this.stream;
    if (stream === undefined || this.failed) return;
    if (this.leftOut > 0) {
      const note = {
        time: new Date().toISOString(),
        level: 'warn',
        msg: `${this.leftOut} later line(s) left out: the file reached its cap of ${this.maxBytes} bytes`,
      };
      stream.write(`${JSON.stringify(note)}\n`);
    }
    await new Promise<void>((resolve) => stream.end(resolve));
  }
}
