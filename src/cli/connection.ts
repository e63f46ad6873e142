import type { FunctionRegistry } from '../exec/function-registry.js';
import { ZkPlan } from '../plan/zk-plan.js';
import { requireConnect, type ConnectionOptions } from './options.js';

/** Connects with the command's --connect and --connect-timeout-ms, runs `use`, and closes the session whatever happens. */
export async function withZkPlan<T>(
  options: ConnectionOptions,
  use: (zkPlan: ZkPlan) => Promise<T>,
  extra: { readonly functions?: FunctionRegistry; readonly sessionTimeoutMs?: number } = {},
): Promise<T> {
  const zkPlan = await connectZkPlan(options, extra);
  try {
    return await use(zkPlan);
  } finally {
    await zkPlan.close();
  }
}

export function connectZkPlan(
  options: ConnectionOptions,
  extra: { readonly functions?: FunctionRegistry; readonly sessionTimeoutMs?: number | undefined } = {},
): Promise<ZkPlan> {
  return ZkPlan.connect({
    connect: requireConnect(options),
    connectTimeoutMs: options.connectTimeoutMs,
    ...(extra.functions ? { functions: extra.functions } : {}),
    ...(extra.sessionTimeoutMs !== undefined ? { sessionTimeoutMs: extra.sessionTimeoutMs } : {}),
  });
}
