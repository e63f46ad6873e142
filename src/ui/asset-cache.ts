/**
 * The web view's static files: elkjs, which lays out the graph in the browser, and the pages'
 * scripts and stylesheet (ui-assets.ts). Each is read once, on its first request, and read again
 * on the next request if that failed.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadUiAssets, type UiAssets } from './ui-assets.js';

/** The static files of one web view, loaded on first request. */
export class AssetCache {
  private readonly elkPath = createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js');
  private elkSource: Promise<Buffer> | undefined;
  private assets: Promise<UiAssets> | undefined; // loaded (or bundled, from source) on first request

  elk(): Promise<Buffer> {
    this.elkSource ??= readFile(this.elkPath);
    return this.elkSource.catch((error: unknown) => {
      this.elkSource = undefined;
      throw error;
    });
  }

  uiAssets(): Promise<UiAssets> {
    this.assets ??= loadUiAssets();
    return this.assets.catch((error: unknown) => {
      this.assets = undefined; // tried again on the next request
      throw error;
    });
  }
}
