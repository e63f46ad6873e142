/**
 * The web view's browser code (src/ui/browser/: TypeScript modules and a stylesheet), bundled by
 * esbuild into one script per page and one for the layout worker. `npm run build` writes the
 * bundles next to this module (dist/ui/assets/), and the server serves those; run from source
 * (tsx, vitest), it bundles on first request instead, so a change to the browser code needs no
 * build step.
 */
import { access, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';

/** Served file → the browser module it is bundled from (the stylesheet is copied as it is). */
const SCRIPT_ENTRIES = {
  'nav.js': 'nav-bar.ts',
  'plans.js': 'plans-page.ts',
  'plan.js': 'plan-page.ts',
  'workflows.js': 'workflows-page.ts',
  'cluster.js': 'cluster-page.ts',
  'schedules.js': 'schedules-page.ts',
  'jobs.js': 'jobs-page.ts',
  'layout-worker.js': 'layout-worker.ts',
} as const;
const STYLESHEET = 'ui.css';

type ScriptName = keyof typeof SCRIPT_ENTRIES;
export type UiAssetName = ScriptName | typeof STYLESHEET;

/** Every asset the pages load, by file name (served at `/<name>`). */
export const UI_ASSET_NAMES: readonly UiAssetName[] = [
  ...(Object.keys(SCRIPT_ENTRIES) as ScriptName[]),
  STYLESHEET,
];

export function isUiAssetName(name: string): name is UiAssetName {
  return (UI_ASSET_NAMES as readonly string[]).includes(name);
}

const BUILT_DIR = new URL('./assets/', import.meta.url);
const SOURCE_DIR = new URL('./browser/', import.meta.url);

/** Each asset's text. */
export type UiAssets = Readonly<Record<UiAssetName, string>>;

/** Bundles the browser code from src/ui/browser/ with esbuild (a development dependency). */
export async function bundleUiAssets(): Promise<UiAssets> {
  let esbuild: typeof Esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    throw new Error(
      `the web view's browser code is not built and esbuild is not installed to bundle it: run npm run build (${String(error)})`,
    );
  }
  const result = await esbuild.build({
    entryPoints: Object.entries(SCRIPT_ENTRIES).map(([out, source]) => ({
      in: fileURLToPath(new URL(source, SOURCE_DIR)),
      out: out.slice(0, -'.js'.length),
    })),
    outdir: 'assets',
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    charset: 'utf8',
    // Libraries written for bundlers (@tanstack/virtual-core) read process.env.NODE_ENV for their debug code.
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    logLevel: 'silent',
  });
  const bundled = new Map(
    result.outputFiles.map((file) => [file.path.slice(file.path.lastIndexOf('/') + 1), file.text]),
  );
  const scripts = Object.fromEntries(
    (Object.keys(SCRIPT_ENTRIES) as ScriptName[]).map((name) => {
      const text = bundled.get(name);
      if (text === undefined)
        throw new Error(`esbuild wrote no ${name} (it wrote ${[...bundled.keys()].join(', ')})`);
      return [name, text];
    }),
  ) as Record<ScriptName, string>;
  return { ...scripts, [STYLESHEET]: await readFile(new URL(STYLESHEET, SOURCE_DIR), 'utf8') };
}

/**
 * A fresh bundle when this module runs from source (src/ui/browser/ is beside it), else the
 * assets built beside it (dist/ui/assets/); a missing one is an error that names it.
 */
export async function loadUiAssets(): Promise<UiAssets> {
  const fromSource = await access(new URL(SCRIPT_ENTRIES['plan.js'], SOURCE_DIR)).then(
    () => true,
    () => false,
  );
  if (fromSource) return bundleUiAssets();
  const read = async (name: UiAssetName): Promise<string> => {
    const file = new URL(name, BUILT_DIR);
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw new Error(
        `the web view's ${fileURLToPath(file)} cannot be read (${String(error)}): npm run build makes it`,
      );
    }
  };
  const texts = await Promise.all(UI_ASSET_NAMES.map(read));
  return Object.fromEntries(UI_ASSET_NAMES.map((name, index) => [name, texts[index]])) as UiAssets;
}
