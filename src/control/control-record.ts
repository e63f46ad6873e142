/**
 * The value of a plan's `control` node (src/zk/layout.ts): present while the plan is paused or
 * cancelled. Pure: parsing and the transitions pause, resume and cancel allow.
 */
import { decodeValue, encodeValue } from '../serialization/codec.js';

/**
 * What a plan's control record says: the plan is paused (until resumePlan) or cancelled (for good).
 *
 * @category Control
 */
export type PlanControlState = 'paused' | 'cancelled';

/**
 * A paused or cancelled plan's control record, as planStatus and describePlan show it: the state, why, since when.
 *
 * @category Control
 */
export interface PlanControlRecord {
  readonly state: PlanControlState;
  /** Why it was cancelled (or paused), as the caller said. */
  readonly reason?: string;
  readonly at: Date;
  /** Paused with `{ abortRunning: true }`: running tasks are aborted and given back uncharged. */
  readonly abortRunning: boolean;
}

export function encodeControlRecord(record: PlanControlRecord, path: string): Buffer {
  return encodeValue(record, 'plan control', path);
}

/**
 * Reads a control node's value. A value zk-plan cannot read (another tool's) counts as a pause:
 * a control node means "stop starting tasks", so when in doubt nothing starts.
 */
export function parseControlRecord(path: string, data: Buffer | null): PlanControlRecord {
  let value: unknown;
  try {
    value = data?.length ? decodeValue(path, data) : undefined;
  } catch {
    value = undefined;
  }
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const state: PlanControlState = record['state'] === 'cancelled' ? 'cancelled' : 'paused';
  const reason =
    typeof record['reason'] === 'string'
      ? record['reason']
      : record['state'] === undefined
        ? 'the control node holds no zk-plan record'
        : undefined;
  const at = record['at'] instanceof Date ? record['at'] : new Date(0);
  return {
    state,
    ...(reason !== undefined ? { reason } : {}),
    at,
    abortRunning: record['abortRunning'] === true,
  };
}

/** What a call asks for, against what the node holds now. */
export type ControlDecision =
  /** Write this record (create the node, or replace the current value by version). */
  | { readonly kind: 'write'; readonly record: PlanControlRecord }
  /** Delete the node (by version): the plan runs again. */
  | { readonly kind: 'delete' }
  /** Nothing to write: the plan is already where the call wants it. */
  | { readonly kind: 'none' }
  /** Refused: the plan was cancelled, which is final. */
  | { readonly kind: 'cancelled'; readonly reason: string | undefined };

export type ControlRequest =
  | { readonly kind: 'pause'; readonly abortRunning: boolean; readonly at: Date }
  | { readonly kind: 'resume' }
  | { readonly kind: 'cancel'; readonly reason: string | undefined; readonly at: Date };

/** The transition a request makes from the current record (undefined: the plan runs). Cancel is final; repeating a call changes nothing. */
export function decideControl(
  current: PlanControlRecord | undefined,
  request: ControlRequest,
): ControlDecision {
  if (current?.state === 'cancelled')
    return request.kind === 'cancel'
      ? { kind: 'none' }
      : { kind: 'cancelled', reason: current.reason };
  switch (request.kind) {
    case 'pause':
      // Asking again with abortRunning where the first pause had none aborts the running tasks now.
      if (current !== undefined && (current.abortRunning || !request.abortRunning))
        return { kind: 'none' };
      return {
        kind: 'write',
        record: {
          state: 'paused',
          at: current?.at ?? request.at,
          abortRunning: request.abortRunning,
        },
      };
    case 'resume':
      return current === undefined ? { kind: 'none' } : { kind: 'delete' };
    case 'cancel':
      return {
        kind: 'write',
        record: {
          state: 'cancelled',
          ...(request.reason !== undefined ? { reason: request.reason } : {}),
          at: request.at,
          abortRunning: true,
        },
      };
  }
}
