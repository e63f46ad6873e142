/**
 * Text made safe for a terminal. Values zk-plan prints come from ZooKeeper, where anyone allowed to
 * write a plan (or a worker of it) can put any text: a failure message holding `ESC[2J` would clear
 * the screen of whoever runs `zk-plan show`, `ESC]0;…BEL` would set their window title, and `\r`
 * would let a forged line overwrite the start of a real one. Every value the CLI and the worker logs
 * print to a terminal goes through `printable` (or, in JSON, `escapeJsonControls`) at the point
 * where it is written.
 */

/* eslint-disable no-control-regex -- matching control characters is the point of this file */

/**
 * Control strings: OSC, DCS, SOS, PM and APC, introduced by ESC `]`, `P`, `X`, `^`, `_` or their C1
 * forms, up to the string terminator (BEL, ESC `\` or C1 ST) or, unterminated, the end of the text.
 * Removed whole: their content (a window title, a hyperlink target…) is not text the terminal shows.
 */
const CONTROL_STRING = /(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)/g;
/** CSI sequences (ESC `[` or C1 CSI): parameter bytes, intermediate bytes, a final byte. */
const CSI_SEQUENCE = /(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g;
/** Any other escape sequence: ESC, intermediate bytes, a final byte (`ESC c` resets the terminal, `ESC ( 0` switches charset…). */
const ESC_SEQUENCE = /\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
/** What is left of C0 (but tab and line feed), DEL and C1. `\r` is among them: it would let text overwrite the line. */
const CONTROL_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export interface PrintableOptions {
  /**
   * `true` (the default) keeps line feeds and tabs, for text laid out on several lines on purpose
   * (a table, a stack trace); `false` makes one line of it: each line break (with the blanks around
   * it) becomes ` ⏎ `, a tab a space, so that a value cannot start a line of its own in a table
   * cell or a log line.
   */
  readonly multiline?: boolean;
}

/**
 * `text` without terminal control: escape sequences removed whole (CSI, OSC and the other control
 * strings, in their 7-bit ESC and 8-bit C1 forms), then every remaining C0 control character but
 * line feed and tab, DEL and every C1 control character. Printable text, the Unicode beyond C1
 * included, is left as it is. Line feeds and tabs are kept, or folded with `multiline: false`.
 */
export function printable(text: string, options: PrintableOptions = {}): string {
  const cleaned = text
    .replace(CONTROL_STRING, '')
    .replace(CSI_SEQUENCE, '')
    .replace(ESC_SEQUENCE, '')
    .replace(CONTROL_CHARACTER, '');
  return options.multiline === false
    ? cleaned.replace(/[ \t]*\n\s*/g, ' ⏎ ').replace(/\t/g, ' ')
    : cleaned;
}

/** True when `text` holds a character `printable` removes (a control character other than line feed and tab). */
export function hasControlCharacters(text: string): boolean {
  return /[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text);
}

/**
 * JSON text safe on a terminal, meaning the same: DEL and the C1 control characters, which
 * `JSON.stringify` (and pino) leave as they are (only C0 is escaped), written as `\u00XX`. They
 * can only occur inside JSON strings, where the escape means the same character, so a JSON reader
 * gets exactly the same value.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(
    /[\x7f-\x9f]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Every string in `value` (a parsed JSON value) through `printable`; `multilineKeys` says which keys keep their line breaks. */
export function printableDeep(
  value: unknown,
  keepLines: (key: string) => boolean,
  key = '',
): unknown {
  if (typeof value === 'string') return printable(value, { multiline: keepLines(key) });
  if (Array.isArray(value)) return value.map((item) => printableDeep(item, keepLines, key));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [
        printable(name, { multiline: false }),
        printableDeep(item, keepLines, name),
      ]),
    );
  }
  return value;
}
