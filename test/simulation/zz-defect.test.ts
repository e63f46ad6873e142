import { it, vi } from 'vitest';
import { reintroducedDefects } from '../../src/store/reintroduced-defects.js';
import { FAKED_TIMERS, runSeed } from './simulation.js';
it('defect', async () => {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  const to = Number(process.env['TO_SEED'] ?? 300);
  reintroducedDefects.ownerFirstDelete = process.env['DEFECT'] === '1';
  const caught: string[] = [];
  const t0 = Date.now();
  for (let seed = 1; seed <= to; seed++) { const r = await runSeed(seed, 'stress'); if (r.violation) caught.push(`${seed}:${r.violation.slice(0, 60)}`); }
  reintroducedDefects.ownerFirstDelete = false;
  vi.useRealTimers();
  console.log('caught', caught.length, caught.slice(0, 6).join(' | '));
}, 600_000);
