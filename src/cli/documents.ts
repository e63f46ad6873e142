import { readFile } from 'node:fs/promises';
import { UsageError } from './exit-codes.js';

/** A JSON file, or YAML when its name ends in .yaml or .yml (a plan spec, a schedule). */
export async function readDocument(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (/\.ya?ml$/i.test(file)) {
    const { parse } = await import('yaml'); // only the CLI, and only for a YAML spec, loads it
    try {
      return parse(text) as unknown;
    } catch (error) {
      throw new UsageError(`${file} is not YAML: ${(error as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `${file} is not JSON (a YAML file's name ends in .yaml or .yml): ${(error as Error).message}`,
    );
  }
}

/** `name=value` pairs; a value that parses as JSON is that JSON (`n=3` is a number), else the text itself. */
export function parseParams(pairs: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--param ${pair}: expected name=value`);
    const text = pair.slice(at + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // plain text
    }
    params[pair.slice(0, at)] = value;
  }
  return params;
}
