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

/** Served path → the browser module it is bundled from (the stylesheet is copied as it is). */
const SCRIPT_ENTRIES: Readonly<Record<string, string>> = {
  'plans.js': 'plans-page.ts',
  'plan.js': 'plan-page.ts',
  'layout-worker.js': 'layout-worker.ts',
};
const STYLESHEET = 'ui.css';

/** Every asset the pages load, by file name. */
export const UI_ASSET_NAMES: readonly string[] = [...Object.keys(SCRIPT_ENTRIES), STYLESHEET];

const BUILT_DIR = new URL('./assets/', import.meta.url);
const SOURCE_DIR = new URL('./browser/', import.meta.url);

/** Asset file name → its text. */
export type UiAssets = ReadonlyMap<string, string>;

/** Bundles the browser code from src/ui/browser/ with esbuild (a development dependency). */
export async function bundleUiAssets(): Promise<UiAssets> {
  let esbuild: typeof Esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    throw new Error(`the web view's browser code is not built and esbuild is not installed to bundle it: run npm run build (${String(error)})`);
  }
  const result = await esbuild.build({
    entryPoints: Object.entries(SCRIPT_ENTRIES).map(([out, source]) => ({ in: fileURLToPath(new URL(source, SOURCE_DIR)), out: out.slice(0, -'.js'.length) })),
    outdir: 'assets',
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    charset: 'utf8',
    legalComments: 'none',
    logLevel: 'silent',
  });
  const assets = new Map<string, string>(result.outputFiles.map((file) => [file.path.slice(file.path.lastIndexOf('/') + 1), file.text]));
  assets.set(STYLESHEET, await readFile(new URL(STYLESHEET, SOURCE_DIR), 'utf8'));
  return assets;
}

/** The built assets when this module runs from a build (dist/), else a fresh bundle of the sources. */
export async function loadUiAssets(): Promise<UiAssets> {
  const built = await access(new URL(STYLESHEET, BUILT_DIR)).then(
    () => true,
    () => false,
  );
  if (!built) return bundleUiAssets();
  return new Map(await Promise.all(UI_ASSET_NAMES.map(async (name) => [name, await readFile(new URL(name, BUILT_DIR), 'utf8')] as const)));
}
