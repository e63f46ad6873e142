/**
 * `zk-plan worker --functions <module>`: JavaScript and TypeScript modules load, and a module that
 * does not tells where (file:line:column) and what.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFunctions } from '../../src/cli/load-functions.js';
import { FunctionRegistry } from '../../src/exec/function-registry.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';
import { expectRejects } from '../support/expect-error.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zk-plan-functions-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * loadFunctions in a plain Node process, as the CLI runs it: under vitest, import() goes through
 * vite's module runner, whose syntax errors differ from Node's own. Resolves with the error's message.
 */
function loadErrorInNode(file: string): string {
  const script = `import('./src/cli/load-functions.ts').then((m) => m.loadFunctions(${JSON.stringify(file)})).then(() => console.log('loaded'), (error) => console.log(error.message));`;
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return run.stdout.trim();
}

async function moduleFile(name: string, lines: readonly string[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

describe('loadFunctions', () => {
  it.each(['tasks.ts', 'tasks.mts', 'tasks.cts'])(
    'loads a TypeScript module (%s): its types are stripped, its functions registered',
    async (name) => {
      const file = await moduleFile(name, [
        'interface Doubled { readonly value: number }',
        'const double = (_ctx: unknown, x: number): Doubled => ({ value: x * 2 });',
        'export default { double };',
        'export const jobs = { poll: async (): Promise<void> => undefined };',
      ]);
      const registry = await loadFunctions(file);
      expect(registry.names()).toEqual(['double']);
      expect(registry.jobNames()).toEqual(['poll']);
    },
  );

  it('takes a registry built with another copy of zk-plan as its own FunctionRegistry, functions, schemas and jobs included', async () => {
    // A registry of another copy: what `instanceof` cannot recognise (ZkPlan.connect would refuse it).
    const file = await moduleFile('foreign.mjs', [
      'const schemas = { result: { "~standard": { version: 1, vendor: "test", validate: (value) => ({ value }) } } };',
      'const functions = new Map([["double", (_ctx, x) => x * 2]]);',
      'export default {',
      '  names: () => [...functions.keys()],',
      '  get: (name) => functions.get(name),',
      '  schemasOf: (name) => (name === "double" ? schemas : undefined),',
      '  jobNames: () => ["poll"],',
      '  jobFunction: () => async () => undefined,',
      '};',
    ]);
    const registry = await loadFunctions(file);
    expect(registry).toBeInstanceOf(FunctionRegistry);
    expect(registry.names()).toEqual(['double']);
    expect(registry.jobNames()).toEqual(['poll']);
    expect(registry.schemasOf('double')?.result).toBeDefined();
    const double = registry.get('double') as unknown as (ctx: unknown, x: number) => number;
    expect(double({}, 21)).toBe(42);
  });

  it('a syntax error in a JavaScript module names its file, line and column', async () => {
    const file = await moduleFile('broken.mjs', [
      'export default {',
      '  ok: () => 1,',
      '  bad: () => { return 1 +; },',
      '};',
    ]);
    expect(loadErrorInNode(file)).toBe(
      `Invalid --functions: cannot load ${file}: ${file}:3:26: Unexpected token ';'`,
    );
  });

  it('a syntax error in a TypeScript module names its file, line and column', async () => {
    const file = await moduleFile('broken.ts', [
      'export default {',
      '  ok: (): number => 1,',
      '  bad: () => { return 1 +; },',
      '};',
    ]);
    const error = await expectRejects(() => loadFunctions(file), InvalidArgumentError);
    expect(error.message).toBe(
      `Invalid --functions: cannot load ${file}: ${file}:3:26: ERROR: Unexpected ";"`,
    );
  });

  it('an error thrown while the module runs names where it was thrown', async () => {
    const file = await moduleFile('throws.mjs', [
      'const config = undefined;',
      'export default { region: config.region };',
    ]);
    const error = await expectRejects(() => loadFunctions(file), InvalidArgumentError);
    expect(error.message).toMatch(
      new RegExp(
        `Cannot read properties of undefined \\(reading 'region'\\) \\(at ${file.replaceAll('.', '\\.')}:2:\\d+\\)`,
      ),
    );
  });
});
