/**
 * Waits until zk-plan's one-time load of `@opentelemetry/api` has settled. Creating a plan, a
 * worker loop, a tick and a job run each wait for that load before their first span; it is real
 * module I/O, which simulated time does not wait for. Were a seed to start before it settled, its
 * first writer and loops would stand still in real time while the driver moved simulated time on,
 * how far depending on how loaded the machine is: on a busy machine stress seed 1352 once saw
 * plans "not ended within 10 minutes" that had not even been created. So every seed runner waits
 * here first, and a seed's run depends on its seed alone.
 */
import { tracingLoading } from '../../src/tracing/tracing.js';

export async function untilTracingLoaded(): Promise<void> {
  const loading = tracingLoading();
  if (loading !== undefined) await loading;
}
