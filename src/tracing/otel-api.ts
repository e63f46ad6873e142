/**
 * `@opentelemetry/api`, when the application installed it: an optional peer dependency, loaded
 * once per process with a dynamic import. Without it the import fails, once; every tracing call then
 * costs a comparison with undefined, and nothing of OpenTelemetry is loaded.
 *
 * The import starts when this module is first evaluated, so that it has settled long before the
 * first plan is created or the first task runs: the callers then go on without waiting, not even a
 * microtask, and the engine's interleavings are the same as without tracing (the seeded replays of
 * test/simulation check that two runs of a seed are identical). A caller that comes earlier waits
 * for it once (`otelApiLoading`).
 *
 * The type is taken with `import type` only, which the compiler erases: nothing here needs the
 * package at run time unless it is there.
 */
import type * as OtelApiModule from '@opentelemetry/api';

export type OtelApi = typeof OtelApiModule;

/** The module once loaded; null when it could not be imported; undefined before the import settled. */
let loaded: OtelApi | null | undefined;
let loading: Promise<void> | undefined;

/**
 * The import of `@opentelemetry/api` while it has not settled yet (started at the first call);
 * undefined once it has, whatever its outcome. Never rejects.
 */
export function otelApiLoading(): Promise<void> | undefined {
  if (loaded !== undefined) return undefined;
  loading ??= importOtelApi().then((api) => {
    loaded = api;
  });
  return loading;
}

/** Waits for the import to settle; resolves the module, or undefined when it cannot be imported. */
export async function loadOtelApi(): Promise<OtelApi | undefined> {
  await otelApiLoading();
  return loaded ?? undefined;
}

/** The loaded module, without waiting: undefined before the import settled, or when it is absent. */
export function otelApi(): OtelApi | undefined {
  return loaded ?? undefined;
}

async function importOtelApi(): Promise<OtelApi | null> {
  try {
    // A variable name keeps bundlers from making the optional package a required one.
    const name = '@opentelemetry/api';
    const module = (await import(name)) as OtelApi & { default?: OtelApi };
    // Its ESM build has named exports; a CommonJS interop may put them under `default`.
    const api = typeof module.trace === 'object' ? module : module.default;
    return api !== undefined && typeof api.trace === 'object' ? api : null;
  } catch {
    return null;
  }
}

void otelApiLoading();
