/**
 * Side effects a task function declares, for the fault harness to compare across the executions
 * of a task. A harness worker sets the recorder up before the user's module loads; the record goes
 * to the execution of the task that is running, found through AsyncLocalStorage. The recorder is
 * kept on `globalThis` under a registered symbol, so that the user's module finds it whichever copy
 * of zk-plan it imports (the worker loads modules through tsx, which may load a second copy).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { InvalidArgumentError } from '../../errors/usage-errors.js';

/** The most characters an effect's name may have. */
export const MAX_EFFECT_NAME_CHARS = 200;

const RECORDER = Symbol.for('zk-plan.fault-harness.effect-recorder');

/** Where the effects of the running execution go. */
export interface EffectSink {
  effect(name: string, value: unknown): void;
}

interface EffectRecorder {
  readonly storage: AsyncLocalStorage<EffectSink>;
}

/** The process's recorder, made on first use. */
export function effectRecorder(): EffectRecorder {
  const holder = globalThis as { [RECORDER]?: EffectRecorder };
  holder[RECORDER] ??= { storage: new AsyncLocalStorage<EffectSink>() };
  return holder[RECORDER];
}

/** Runs `body` with `sink` receiving the effects it (and what it awaits) declares. */
export function withEffectSink<T>(sink: EffectSink, body: () => T): T {
  return effectRecorder().storage.run(sink, body);
}

/**
 * Declares a side effect of the running task function (an e-mail sent, a row written, a file put),
 * by a name and a value that says what it did: `recordEffect('email', { to, subject })`. Under the
 * fault harness (`runFaultHarness`), the effects of every execution of a task are compared: a
 * function whose executions with the same inputs declare different effects is reported as not
 * idempotent. Outside a harness run, and outside a task function, it does nothing, so the call can
 * stay in production code.
 *
 * @param name - what kind of effect (1–200 characters).
 * @param value - what the effect did (any value superjson can serialise); compared by value.
 * @category Fault harness
 */
export function recordEffect(name: string, value?: unknown): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_EFFECT_NAME_CHARS)
    throw new InvalidArgumentError(
      'name',
      `recordEffect needs the effect's name, a string of 1 to ${MAX_EFFECT_NAME_CHARS} characters, such as 'email'`,
    );
  effectRecorder().storage.getStore()?.effect(name, value);
}
