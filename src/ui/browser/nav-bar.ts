/**
 * `/nav.js`, loaded by every page before its own script: fills the navigation bar's time-zone
 * selector (the browser's own zone, UTC, then every IANA zone Intl knows) with the reader's
 * choice selected, and remembers a new choice (time-view.ts tells the page's script).
 */
import { byId, h } from './dom.js';
import { LOCAL_ZONE } from './time-format.js';
import { preferredZone, setPreferredZone } from './time-zone.js';

/** Every zone this browser can format in; UTC alone where Intl cannot list them. */
function knownZones(): string[] {
  const intl = Intl as typeof Intl & { supportedValuesOf?: (key: string) => string[] };
  const zones =
    typeof intl.supportedValuesOf === 'function' ? intl.supportedValuesOf('timeZone') : [];
  return ['UTC', ...zones.filter((zone) => zone !== 'UTC')];
}

function fillZoneSelector(select: HTMLSelectElement): void {
  const current = preferredZone();
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const local = h('option', `Local (${own})`);
  local.value = LOCAL_ZONE;
  select.appendChild(local);
  const zones = knownZones();
  if (current !== LOCAL_ZONE && !zones.includes(current)) zones.unshift(current);
  for (const zone of zones) {
    const option = h('option', zone);
    option.value = zone;
    select.appendChild(option);
  }
  select.value = current;
  select.addEventListener('change', () => setPreferredZone(select.value));
}

fillZoneSelector(byId<HTMLSelectElement>('time-zone'));
