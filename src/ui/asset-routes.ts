/**
 * The web view's routes of static files: elkjs, which lays out the graph in the browser, and the
 * pages' scripts and stylesheet (kept by asset-cache.ts).
 */
import { ASSET_TYPES, HttpError } from './http-rules.js';
import { send } from './http-answers.js';
import { isUiAssetName } from './ui-assets.js';
import type { UiRoute } from './ui-context.js';

export const ASSET_ROUTES: Readonly<Record<string, UiRoute>> = {
  '/elk.js': async (ctx, _req, res) => {
    send(res, 200, 'text/javascript; charset=utf-8', await ctx.assets.elk(), {
      'Cache-Control': 'public, max-age=86400',
    });
  },
};

/** Any other path: one of the pages' scripts or their stylesheet, or 404. */
export const serveUiAsset: UiRoute = async (ctx, _req, res, url) => {
  const name = url.pathname.slice(1);
  if (!isUiAssetName(name)) throw new HttpError(404, 'NOT_FOUND', `nothing at ${url.pathname}`);
  const loaded = await ctx.assets.uiAssets();
  send(
    res,
    200,
    ASSET_TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    loaded[name],
  );
};
