import { it, vi } from 'vitest';
import { reintroducedDefects } from '../../src/store/reintroduced-defects.js';
import { FAKED_TIMERS, runSeed } from './simulation.js';
it('one', async () => {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  reintroducedDefects.ownerFirstDelete = true;
  const r = await runSeed(Number(process.env['S']), 'stress');
  reintroducedDefects.ownerFirstDelete = false;
  vi.useRealTimers();
  console.log(r.violation?.slice(0, 600));
  const { writeFileSync } = await import('node:fs'); writeFileSync('/tmp/one.txt', r.trace.join('\n'));
}, 600_000);
