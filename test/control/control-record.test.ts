import { describe, expect, it } from 'vitest';
import {
  decideControl,
  encodeControlRecord,
  parseControlRecord,
  type PlanControlRecord,
} from '../../src/control/control-record.js';
import { encodeValue } from '../../src/serialization/codec.js';

const at = new Date('2026-11-24T10:00:00Z');
const later = new Date('2026-11-24T11:00:00Z');
const paused: PlanControlRecord = { state: 'paused', at, abortRunning: false };
const cancelled: PlanControlRecord = {
  state: 'cancelled',
  reason: 'started by mistake',
  at,
  abortRunning: true,
};

describe('decideControl: the transitions of pause, resume and cancel', () => {
  it('pause writes a paused record once; asking again changes nothing, unless it now asks to abort running tasks', () => {
    expect(decideControl(undefined, { kind: 'pause', abortRunning: false, at })).toEqual({
      kind: 'write',
      record: paused,
    });
    expect(decideControl(paused, { kind: 'pause', abortRunning: false, at: later })).toEqual({
      kind: 'none',
    });
    expect(decideControl(paused, { kind: 'pause', abortRunning: true, at: later })).toEqual({
      kind: 'write',
      record: { ...paused, abortRunning: true },
    });
    expect(
      decideControl(
        { ...paused, abortRunning: true },
        { kind: 'pause', abortRunning: false, at: later },
      ),
    ).toEqual({ kind: 'none' });
  });

  it('resume deletes the record of a paused plan and leaves a running one alone', () => {
    expect(decideControl(paused, { kind: 'resume' })).toEqual({ kind: 'delete' });
    expect(decideControl(undefined, { kind: 'resume' })).toEqual({ kind: 'none' });
  });

  it('cancel is final: it replaces a pause, repeating it keeps the first reason, and pause or resume of a cancelled plan is refused', () => {
    expect(decideControl(paused, { kind: 'cancel', reason: 'started by mistake', at })).toEqual({
      kind: 'write',
      record: cancelled,
    });
    expect(decideControl(undefined, { kind: 'cancel', reason: undefined, at })).toEqual({
      kind: 'write',
      record: { state: 'cancelled', at, abortRunning: true },
    });
    expect(
      decideControl(cancelled, { kind: 'cancel', reason: 'another reason', at: later }),
    ).toEqual({ kind: 'none' });
    expect(decideControl(cancelled, { kind: 'pause', abortRunning: false, at })).toEqual({
      kind: 'cancelled',
      reason: 'started by mistake',
    });
    expect(decideControl(cancelled, { kind: 'resume' })).toEqual({
      kind: 'cancelled',
      reason: 'started by mistake',
    });
  });
});

describe('parseControlRecord', () => {
  it('reads back what is written', () => {
    const path = '/plans/plan-0000000001/control';
    expect(parseControlRecord(path, encodeControlRecord(cancelled, path))).toEqual(cancelled);
    expect(parseControlRecord(path, encodeControlRecord(paused, path))).toEqual(paused);
  });

  it('takes a control node it cannot read (another tool wrote it) for a pause, so nothing starts', () => {
    const path = '/plans/plan-0000000001/control';
    expect(parseControlRecord(path, null)).toMatchObject({ state: 'paused', abortRunning: false });
    expect(parseControlRecord(path, Buffer.from('not superjson'))).toMatchObject({
      state: 'paused',
    });
    expect(parseControlRecord(path, encodeValue({ state: 'stopped' }, 'x'))).toMatchObject({
      state: 'paused',
    });
  });
});
