/**
 * The web view's stylesheet (served as `/ui.css`) and the colour of each task state, which it and
 * the pages' legends share.
 */
import { TASK_VIEW_STATES } from './ui-model.js';

/** Fill and text colour of each task state (legend order). */
export const STATE_COLORS: Readonly<Record<(typeof TASK_VIEW_STATES)[number], { readonly fill: string; readonly text: string }>> = {
  building: { fill: '#d5d9e0', text: '#39404d' },
  waiting: { fill: '#eef1f6', text: '#39404d' },
  runnable: { fill: '#a9d6f5', text: '#0d3550' },
  retrying: { fill: '#ffc857', text: '#4a3400' },
  running: { fill: '#1f7fd1', text: '#ffffff' },
  finishing: { fill: '#8fd18b', text: '#123d10' },
  done: { fill: '#2e9e5b', text: '#ffffff' },
  failed: { fill: '#d63a3a', text: '#ffffff' },
  blocked: { fill: '#8e5bc8', text: '#ffffff' },
};

const stateRules = TASK_VIEW_STATES.map((state) => {
  const { fill, text } = STATE_COLORS[state];
  return (
    `[data-state="${state}"] { --fill: ${fill}; --ink: ${text}; }\n` +
    `g.node[data-state="${state}"] > rect { fill: ${fill}; }\n` +
    `g.node[data-state="${state}"] > text { fill: ${text}; }`
  );
}).join('\n');

export const UI_CSS =
  String.raw`
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
a { color: #1463b3; text-decoration: none; }
a:hover { text-decoration: underline; }
header { display: flex; align-items: center; gap: 14px; padding: 10px 16px; background: #fff; border-bottom: 1px solid #dde1e7; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0; font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.crumb { color: #5b6474; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; background: #e3e6eb; color: #39404d; }
.badge[data-state="running"] { background: #1f7fd1; color: #fff; }
.badge[data-state="completed"] { background: #2e9e5b; color: #fff; }
.badge[data-state="failed"] { background: #d63a3a; color: #fff; }
.badge[data-state="building"] { background: #d5d9e0; color: #39404d; }
.badge[data-state="gone"] { background: #5b6474; color: #fff; }
.progress { display: flex; align-items: center; gap: 8px; }
.bar { width: 180px; height: 8px; background: #e3e6eb; border-radius: 4px; overflow: hidden; }
.bar > div { height: 100%; width: 0; background: #2e9e5b; transition: width .3s; }
.live { margin-left: auto; color: #5b6474; font-size: 12px; }
.live[data-live="live"]::before { content: "● "; color: #2e9e5b; }
.live[data-live="down"]::before { content: "● "; color: #d63a3a; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; padding: 8px 16px; background: #fff; border-bottom: 1px solid #dde1e7; font-size: 12px; }
.legend span.item { display: inline-flex; align-items: center; gap: 5px; }
.legend i { width: 14px; height: 14px; border-radius: 3px; display: inline-block; background: var(--fill); border: 1px solid rgba(0,0,0,.15); }
.legend b { font-weight: 600; }
body.plan-page { display: flex; flex-direction: column; }
main.plan { display: flex; flex: 1; min-height: 300px; }
#canvas { flex: 1; position: relative; overflow: hidden; background: #fbfcfd; }
#graph { width: 100%; height: 100%; display: block; cursor: grab; user-select: none; }
#graph.panning { cursor: grabbing; }
g.node { cursor: pointer; }
g.node > rect { stroke: rgba(0,0,0,.25); stroke-width: 1; }
g.node > text { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; pointer-events: none; }
g.node.gone > rect { stroke-dasharray: 4 3; }
g.node.selected > rect { stroke: #111; stroke-width: 3; }
g.node.related > rect { stroke: #111; stroke-width: 2; stroke-dasharray: 2 2; }
#edges path { fill: none; stroke: #8a94a6; stroke-width: 1.2; }
#edges path.hot { stroke: #111; stroke-width: 2; }
.toolbar { position: absolute; left: 10px; bottom: 10px; display: flex; gap: 6px; align-items: center; font-size: 12px; color: #5b6474; }
.toolbar button { border: 1px solid #c9ced6; background: #fff; border-radius: 4px; padding: 3px 9px; cursor: pointer; font: inherit; color: #1d2330; }
#notice { position: absolute; top: 10px; left: 50%; transform: translateX(-50%); background: #fff4d6; border: 1px solid #e9c46a; padding: 4px 12px; border-radius: 4px; font-size: 12px; }
#notice:empty { display: none; }
aside#panel { width: 400px; flex: none; overflow: auto; background: #fff; border-left: 1px solid #dde1e7; padding: 14px 16px; }
aside#panel h2 { margin: 0 0 6px; font-size: 18px; }
aside#panel h2 small { font-weight: normal; color: #5b6474; font-size: 12px; font-family: ui-monospace, monospace; margin-left: 6px; }
aside#panel h3 { font-size: 13px; margin: 16px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: #5b6474; }
aside#panel .hint { color: #5b6474; }
.pill { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px; font-weight: 600; background: var(--fill); color: var(--ink); border: 1px solid rgba(0,0,0,.15); }
dl { display: grid; grid-template-columns: 110px 1fr; gap: 4px 10px; margin: 10px 0 0; }
dt { color: #5b6474; }
dd { margin: 0; word-break: break-word; }
pre { margin: 0; padding: 8px; background: #f3f4f7; border-radius: 4px; font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-word; max-height: 320px; overflow: auto; }
section.error { border-left: 4px solid #d63a3a; padding-left: 10px; }
section.error .message { font-weight: 600; margin: 4px 0 8px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f3f4f7; padding: 1px 4px; border-radius: 3px; }
ul.inputs { margin: 0; padding-left: 18px; }
table.plans { border-collapse: collapse; margin: 16px; background: #fff; min-width: 820px; border: 1px solid #dde1e7; }
table.plans th, table.plans td { text-align: left; padding: 8px 12px; border-bottom: 1px solid #eceef2; }
table.plans th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #5b6474; background: #fafbfc; }
table.plans td.num { font-variant-numeric: tabular-nums; }
.empty { margin: 16px; color: #5b6474; }
` + stateRules;
