import { StringDecoder } from 'node:string_decoder';

/**
 * Cuts a stream's bytes into lines for the task's log, as they arrive: UTF-8 decoded across
 * chunk boundaries, `\n` or `\r\n` ended, each line at most `maxChars` characters. A longer line
 * keeps its start and says how much of it was left out; what is left out is never held, so a
 * command that writes megabytes without a line break costs no more memory than one line.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private current = '';
  private dropped = 0;

  constructor(
    private readonly maxChars: number,
    private readonly emit: (line: string) => void,
  ) {}

  write(chunk: Buffer): void {
    this.take(this.decoder.write(chunk));
  }

  /** The stream ended: its last line, when it had no line break. */
  end(): void {
    this.take(this.decoder.end());
    if (this.current !== '' || this.dropped > 0) this.finishLine();
  }

  private take(text: string): void {
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      this.append(newline === -1 ? text.slice(start) : text.slice(start, newline));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  private append(piece: string): void {
    const room = this.maxChars - this.current.length;
    if (piece.length <= room) {
      this.current += piece;
      return;
    }
    this.current += piece.slice(0, Math.max(0, room));
    this.dropped += piece.length - Math.max(0, room);
  }

  private finishLine(): void {
    const line = this.current.endsWith('\r') ? this.current.slice(0, -1) : this.current;
    this.emit(this.dropped > 0 ? `${line}… (${this.dropped} more characters cut)` : line);
    this.current = '';
    this.dropped = 0;
  }
}
