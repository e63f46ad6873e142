/**
 * The functions module of examples/fault-tolerance.test.ts: the demo pipeline's functions, and one
 * deliberately not idempotent, for the fault harness to name.
 *
 * - `audit.invoice(report)`: "sends" an invoice for the report's revenue under a fresh random
 *   number, and declares the sending as an effect. Run twice, it sends two different invoices: a
 *   function that must not run again after a crash as it is (it would need an idempotency key
 *   derived from its inputs, e.g. the plan's, instead of a random one).
 */
import { randomUUID } from 'node:crypto';
import type { TaskContext } from '../src/index.js';
import { recordEffect } from '../src/testing/index.js';
import { pipelineFunctions, type Report } from './pipeline-functions.js';

/** The pipeline's functions and the invoice. */
export const functions = pipelineFunctions().register(
  'audit.invoice',
  (_ctx: TaskContext<[]>, report: Report) => {
    const invoice = { number: randomUUID(), amountEur: report.revenueEur };
    recordEffect('invoice sent', invoice);
    return invoice;
  },
);
