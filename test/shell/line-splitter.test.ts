import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/shell/line-splitter.js';

function split(chunks: readonly Buffer[], maxChars = 10): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter(maxChars, (line) => lines.push(line));
  for (const chunk of chunks) splitter.write(chunk);
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('cuts at \\n and \\r\\n, across chunks, and ends with a last line that had no line break', () => {
    expect(split([Buffer.from('a\r\nb'), Buffer.from('c\n\nd')])).toEqual(['a', 'bc', '', 'd']);
    expect(split([Buffer.from('a\n')])).toEqual(['a']);
    expect(split([])).toEqual([]);
  });

  it('decodes a UTF-8 character split between two chunks', () => {
    const bytes = Buffer.from('é€\n');
    expect(split([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)])).toEqual(['é€']);
  });

  it('keeps the start of a long line and counts the rest, without holding it', () => {
    expect(split([Buffer.from('0123456789abc'), Buffer.from('def\nshort\n')], 10)).toEqual([
      '0123456789… (6 more characters cut)',
      'short',
    ]);
    expect(split([Buffer.from('x'.repeat(25))], 10)).toEqual([
      `${'x'.repeat(10)}… (15 more characters cut)`,
    ]);
  });
});
