import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** What importing a module loads, as scripts/loaded-packages.mjs reports it (run in a child process). */
function packagesLoadedBy(entry: string): string[] {
  return JSON.parse(
    execFileSync(process.execPath, ['scripts/loaded-packages.mjs', entry], { encoding: 'utf8' }),
  ) as string[];
}

const HEAVY = ['elkjs', 'prom-client', 'pino', 'pino-pretty', 'cli-progress', 'commander'];
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  exports: Record<string, { import: string } | string>;
};

/** The source file an export of package.json is built from (tsconfig.build.json: src/ → dist/). */
function sourceOf(subpath: string): string {
  const target = manifest.exports[subpath];
  if (typeof target !== 'object')
    throw new Error(`package.json has no import condition for ${subpath}`);
  return target.import.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
}

describe('entry points', () => {
  it('package.json exports zk-plan, zk-plan/testing, zk-plan/metrics and zk-plan/ui, built from src/', () => {
    expect(Object.keys(manifest.exports).sort()).toEqual([
      '.',
      './metrics',
      './package.json',
      './testing',
      './ui',
    ]);
    expect(sourceOf('.')).toBe('src/index.ts');
    expect(sourceOf('./testing')).toBe('src/testing/index.ts');
    expect(sourceOf('./metrics')).toBe('src/observability/index.ts');
    expect(sourceOf('./ui')).toBe('src/ui/index.ts');
  });

  it(
    "import 'zk-plan' loads none of elkjs, prom-client, pino, cli-progress or commander",
    { timeout: 60_000 },
    () => {
      const loaded = packagesLoadedBy(sourceOf('.'));
      expect(loaded).toContain('zookeeper'); // the recorder sees what is loaded, native and CommonJS packages too
      expect(loaded.filter((name) => HEAVY.includes(name))).toEqual([]);
    },
  );

  it(
    "import 'zk-plan/testing' and 'zk-plan/ui' load none of them either",
    { timeout: 60_000 },
    () => {
      for (const subpath of ['./testing', './ui'])
        expect(packagesLoadedBy(sourceOf(subpath)).filter((name) => HEAVY.includes(name))).toEqual(
          [],
        );
    },
  );

  it(
    "import 'zk-plan/metrics' is where prom-client and pino come from",
    { timeout: 60_000 },
    () => {
      expect(packagesLoadedBy(sourceOf('./metrics'))).toEqual(
        expect.arrayContaining(['prom-client', 'pino']),
      );
    },
  );
});
