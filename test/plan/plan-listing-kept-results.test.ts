/**
 * Review of 27e6fc1: the limit charges every child of a plan 19 bytes (a task's name), but a kept
 * result (`result-NNNNNNNNNN`, 4 + 17 bytes in a reply) outlives its task in the same listing. A plan
 * filled to the limit with tasks that keep their result, once they have run, lists past the default
 * jute.maxbuffer (what Java clients refuse, as the lead measured with zkCli.sh).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { maxPlanChildren } from '../../src/plan/plan-listing-limit.js';

/** A getChildren2 reply's header (xid, zxid, err), the vector's length and the stat. */
const REPLY_OVERHEAD_BYTES = 16 + 4 + 80;
const KEPT_RESULT_NAME = 'result-0000000001';

describe('the plan listing limit under the default jute.maxbuffer', () => {
  it('keeps a plan of that many kept results within one reply', () => {
    const children = maxPlanChildren(DEFAULTS.juteMaxBufferBytes);
    const replyBytes = REPLY_OVERHEAD_BYTES + children * (4 + KEPT_RESULT_NAME.length);
    expect(replyBytes).toBeLessThan(DEFAULTS.juteMaxBufferBytes);
  });
});
