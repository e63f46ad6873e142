import { it } from 'vitest';
import { vi } from 'vitest';
import { FAKED_TIMERS, runSeed } from './simulation.js';
it('survey', async () => {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  const from = Number(process.env['FROM_SEED'] ?? 1), to = Number(process.env['TO_SEED'] ?? 100);
  const counts = new Map<string, number[]>();
  let steps = 0; const t0 = performance.now();
  for (let seed = from; seed <= to; seed++) {
    const r = await runSeed(seed);
    steps += r.steps;
    if (r.violation) { const key = r.violation.split('\n')[0]!.replace(/plan-\d+|task-\d+|p\d+|run#\d+|\d{6,}/g, '#').slice(0, 140); counts.set(key, [...(counts.get(key) ?? []), seed]); }
  }
  vi.useRealTimers();
  for (const [k, v] of counts) console.log(v.length, k, v.slice(0, 8).join(','));
  console.log('steps', steps);
}, 600_000);
