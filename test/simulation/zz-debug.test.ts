import { it } from 'vitest';
import { firstViolation } from './seeds.js';
it('debug', async () => {
  const r = await firstViolation([Number(process.env['S'] ?? 1)]);
  if (r) console.log(r.violation?.slice(0, 3000), '\n', r.trace.slice(Number(process.env['FROM'] ?? -200), Number(process.env['TO'] ?? undefined) || undefined).join('\n'));
});
