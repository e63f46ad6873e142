import { it, vi } from 'vitest';
import { FAKED_TIMERS, runSeed } from './simulation.js';
it('det', async () => {
  vi.useFakeTimers({ toFake: [...FAKED_TIMERS] });
  const target = Number(process.env['S'] ?? 52);
  const alone = await runSeed(target);
  for (let seed = 1; seed < Number(process.env['BEFORE'] ?? 5); seed++) await runSeed(seed);
  const after = await runSeed(target);
  vi.useRealTimers();
  const n = Math.min(alone.trace.length, after.trace.length);
  let i = 0; while (i < n && alone.trace[i] === after.trace[i]) i++;
  console.log('lengths', alone.trace.length, after.trace.length, 'diverge at', i, alone.violation?.slice(0,200), '|', after.violation?.slice(0,200));
  console.log(alone.trace.slice(Math.max(0, i - 15), i + 5).join('\n'));
  console.log('----');
  console.log(after.trace.slice(Math.max(0, i - 15), i + 5).join('\n'));
}, 600_000);
