/**
 * The web view's page assets, embedded as strings so they are served the same from `src/`
 * (tsx, vitest) and from `dist/` (no copy step). The scripts are plain ES2017 for the browser:
 * every value from ZooKeeper is put into the page with `textContent` or `setAttribute`, never as
 * markup; the only markup built on the server is escaped with `escapeHtml`.
 */
export { GRAPH_JS } from './page-graph-script.js';
export { planPageHtml, plansPageHtml } from './page-html.js';
export { LAYOUT_WORKER_JS } from './page-layout-worker.js';
export { PLAN_JS } from './page-plan-script.js';
export { PLANS_JS } from './page-plans-script.js';
export { STATE_COLORS, UI_CSS } from './page-styles.js';
