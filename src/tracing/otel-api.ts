/**
 * `@opentelemetry/api`, when the application installed it: an optional peer dependency, loaded
 * once per process with a dynamic import. Without it the import fails, once; every tracing call then
 * costs a comparison with undefined, and nothing of OpenTelemetry is loaded.
 *
 * The type is taken with `import type` only, which the compiler erases: nothing here needs the
 * package at run time unless it is there.
 */
import type * as OtelApiModule from '@opentelemetry/api';

export type OtelApi = typeof OtelApiModule;

/** The module once loaded; null when it could not be imported; undefined before the first try. */
let loaded: OtelApi | null | undefined;
let loading: Promise<OtelApi | null> | undefined;

/**
 * Loads `@opentelemetry/api` if it can be imported, once per process; every later call answers the
 * first one's result. Never throws: an application without it runs untraced.
 */
export async function loadOtelApi(): Promise<OtelApi | undefined> {
  if (loaded !== undefined) return loaded ?? undefined;
  loading ??= importOtelApi();
  loaded = await loading;
  return loaded ?? undefined;
}

/** The loaded module, without waiting: undefined before loadOtelApi resolved, or when it is absent. */
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
