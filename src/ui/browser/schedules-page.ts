/**
 * `/schedules.js`: the schedules page. Each schedule of the view's schedules' parent with its
 * runs and backfills, read from `/api/schedules` every 5 s; `?name=<schedule>` marks one and
 * scrolls to it.
 */
import type { UiSchedules } from '../ui-wire.js';
import { byId } from './dom.js';
import { linkedName, markLinked, pollJson, rerenderOnTime } from './list-page.js';
import { renderSchedules } from './schedules-view.js';
import { preferredZone } from './time-zone.js';

const tables = { schedules: byId('schedules'), schedulesEmpty: byId('schedules-empty') };
const linked = linkedName();
const scrolled = { done: false };
let latest: UiSchedules | undefined;

function render(): void {
  if (latest === undefined) return;
  renderSchedules(latest.schedules, latest.schedulesParent, tables, Date.now(), preferredZone());
  if (linked !== undefined && !markLinked(tables.schedules, 'schedule', linked, scrolled))
    tables.schedulesEmpty.textContent = `No schedule named ${linked} is listed.`;
}

pollJson<UiSchedules>(
  '/api/schedules',
  (answer) => {
    latest = answer;
    render();
  },
  { note: byId('cluster-note'), live: byId('live') },
);
rerenderOnTime(render);
