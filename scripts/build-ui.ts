/**
 * `npm run build`'s second step: bundles the web view's browser code (src/ui/browser/) into
 * dist/ui/assets/, which the built server serves (src/ui/ui-assets.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { bundleUiAssets } from '../src/ui/ui-assets.js';

const outDir = new URL('../dist/ui/assets/', import.meta.url);
await mkdir(outDir, { recursive: true });
const assets = await bundleUiAssets();
const sizes = Object.entries(assets).map(
  ([name, text]) => `${name} ${Math.round(text.length / 1024)} KiB`,
);
for (const [name, text] of Object.entries(assets)) await writeFile(new URL(name, outDir), text);
console.log(`web view: ${sizes.length} assets in dist/ui/assets (${sizes.join(', ')})`);
