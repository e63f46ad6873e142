import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  clusterPageHtml,
  jobsPageHtml,
  planPageHtml,
  plansPageHtml,
  schedulesPageHtml,
  workflowsPageHtml,
} from '../../src/ui/page-html.js';
import { UI_ASSET_NAMES, bundleUiAssets } from '../../src/ui/ui-assets.js';
import { TASK_VIEW_STATES } from '../../src/ui/ui-wire.js';

const assets = await bundleUiAssets();
const scripts = Object.entries(assets).filter(([name]) => name.endsWith('.js'));

describe('the web view’s assets, bundled from src/ui/browser', () => {
  it('are every asset the pages load, each a script that parses or the stylesheet', () => {
    expect(Object.keys(assets).sort()).toEqual([...UI_ASSET_NAMES].sort());
    expect(scripts.map(([name]) => name).sort()).toEqual([
      'cluster.js',
      'jobs.js',
      'layout-worker.js',
      'nav.js',
      'plan.js',
      'plans.js',
      'schedules.js',
      'workflows.js',
    ]);
    for (const [name, source] of scripts)
      expect(() => new Script(source, { filename: name }), name).not.toThrow();
  });

  it('are self-contained browser scripts: no import, no require, nothing of Node', () => {
    for (const [name, source] of scripts) {
      expect(source, name).not.toMatch(/\bimport\s*[{*(]|\brequire\(|node:|process\.env|Buffer\./);
    }
  });

  it('never put data into markup', () => {
    for (const [name, source] of scripts)
      expect(source, name).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
      );
  });

  it('colour every task state and every plan state’s badge', () => {
    const css = assets['ui.css'];
    for (const state of TASK_VIEW_STATES)
      expect(css).toMatch(
        new RegExp(
          `g\\.node\\[data-state=["']${state}["']\\] > rect \\{\\s*fill: #[0-9a-f]{6};\\s*\\}`,
        ),
      );
    for (const state of ['running', 'paused', 'cancelled', 'completed', 'failed', 'building'])
      expect(css).toMatch(
        new RegExp(`\\.badge\\[data-state=["']${state}["']\\] \\{\\s*background: #[0-9a-f]{6};`),
      );
  });
});

describe('the pages’ HTML', () => {
  it('escapes the paths it shows and loads scripts from this server only', () => {
    const evil = '/x"><script>alert(1)</script>';
    const plan = planPageHtml(`${evil}/plan-0000000001`);
    const plans = plansPageHtml(evil);
    const lists = [workflowsPageHtml, clusterPageHtml, schedulesPageHtml, jobsPageHtml].map(
      (page) => page(evil),
    );
    for (const html of [plan, plans, ...lists]) {
      expect(html).not.toContain('<script>alert');
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(
        [...html.matchAll(/<script\b[^>]*>/g)]
          .map(([tag]) => tag)
          .every((tag) => /^<script src="\/[a-z-]+\.js">$/.test(tag)),
      ).toBe(true);
    }
    expect(plan).toContain(
      'data-plan="/x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;/plan-0000000001"',
    );
    for (const state of TASK_VIEW_STATES) expect(plan).toContain(`id="count-${state}"`);
  });

  it('hold every element the scripts look up', () => {
    const plan = planPageHtml('/p/plan-0000000001');
    const plans = plansPageHtml('/p');
    const lookups = (source: string): string[] =>
      [...source.matchAll(/byId\(["'`]([a-z-]+)["'`]\)/g)].map(([, id]) => id as string);
    const planIds = lookups(assets['plan.js']);
    const plansIds = lookups(assets['plans.js']);
    expect(planIds).toEqual(
      expect.arrayContaining(['graph', 'panel', 'actions', 'cancel-reason', 'plan-priority']),
    );
    for (const action of ['pause', 'resume', 'cancel', 'retry'])
      expect(plan).toContain(`id="action-${action}"`); // looked up by a built name
    expect(plansIds).toEqual(expect.arrayContaining(['plans', 'empty', 'live']));
    for (const id of planIds) expect(plan, id).toContain(`id="${id}"`);
    for (const id of plansIds) expect(plans, id).toContain(`id="${id}"`);
    // Each list page holds what its script looks up, and every page the navigation bar's selector.
    const pages = {
      'workflows.js': workflowsPageHtml('/p'),
      'cluster.js': clusterPageHtml('/p'),
      'schedules.js': schedulesPageHtml('/p'),
      'jobs.js': jobsPageHtml('/p'),
    } as const;
    expect(lookups(assets['workflows.js'])).toEqual(
      expect.arrayContaining(['workflows', 'runs', 'filter-state', 'filter-from', 'filter-to']),
    );
    expect(lookups(assets['cluster.js'])).toEqual(expect.arrayContaining(['workers', 'limits']));
    for (const [script, html] of Object.entries(pages))
      for (const id of lookups(assets[script as keyof typeof pages]))
        expect(html, id).toContain(`id="${id}"`);
    expect(lookups(assets['nav.js'])).toEqual(['time-zone']);
    for (const html of [plan, plans, ...Object.values(pages)]) {
      expect(html).toContain('id="time-zone"');
      expect(html).toMatch(/<script src="\/nav\.js"><\/script>\n<script src="\/[a-z]+\.js">/);
    }
  });
});
