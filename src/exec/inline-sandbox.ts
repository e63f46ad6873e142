import { VM } from 'vm2';

/** The part of the task context an inline function may see: data only, no container, no host objects. */
export interface InlineContext {
  readonly params: readonly unknown[];
  readonly task: string;
  readonly plan: string;
  readonly workerId: string;
}

/**
 * Runs inline function source in a fresh vm2 sandbox: no `require`, no `process`, no `eval`,
 * no WebAssembly, and a time limit on its synchronous part. Defence in depth, not a security
 * boundary: only trusted writers should be able to create inline tasks.
 */
export function runInline(source: string, ctx: InlineContext, args: readonly unknown[], timeoutMs: number): unknown {
  const vm = new VM({
    timeout: timeoutMs,
    allowAsync: true,
    eval: false,
    wasm: false,
    sandbox: { __zkPlanCtx: { ...ctx, params: [...ctx.params] }, __zkPlanArgs: [...args] },
  });
  return vm.run(`"use strict"; (${source})(__zkPlanCtx, ...__zkPlanArgs)`);
}
