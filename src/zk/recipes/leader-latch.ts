/**
 * Leader election after Curator's LeaderLatch: each candidate keeps one ephemeral sequential node
 * `latch-<session>-N` under the latch's node; the lowest N leads. The node names its session, so a
 * create whose reply was lost is found in the listing (sequential creates are never resent) and a
 * session keeps at most one node. A leader's writes are fenced by the session of its node: once
 * that session has expired (and the node with it), nothing it sends lands, so two leaders never
 * write at once even when one of them is frozen or cut off.
 */
import { isZkError } from '../../errors/zk-error.js';
import { LATCH_PREFIX, childPath } from '../layout.js';
import type { Watcher, ZkSession } from '../zk-client-types.js';
import type { Zk } from '../zk.js';

/** The serial of a latch node's name: its last ten digits (the `-` before them separates, it is no sign). */
function latchSerial(name: string): number {
  const match = /(\d{10})$/.exec(name);
  return match === null ? Number.POSITIVE_INFINITY : Number(match[1]);
}

export class LeaderLatch {
  private armed = false;
  private readonly watcher: Watcher;

  /** `changed` is called (once per watch) when the candidates change: look again. */
  constructor(
    private readonly zk: Zk,
    readonly node: string,
    changed: () => void,
  ) {
    this.watcher = () => {
      this.armed = false;
      changed();
    };
  }

  /** Joins (once per session) and tells whether this session leads: the session to fence a leader's writes with, or undefined. */
  async lead(): Promise<ZkSession | undefined> {
    const session = this.zk.session;
    const prefix = `${LATCH_PREFIX}${session.id}-`;
    await this.zk.ensurePath(this.node);
    let children = await this.candidates();
    if (!children.some((name) => name.startsWith(prefix))) {
      try {
        await this.zk.create(childPath(this.node, prefix), null, 'ephemeral-sequential', {
          fence: session,
        });
      } catch (error) {
        if (!isZkError(error, 'CONNECTION_LOSS')) throw error; // lost reply: the listing tells whether it landed
      }
      children = await this.candidates();
    }
    const [first] = [...children].sort((a, b) => latchSerial(a) - latchSerial(b));
    return first !== undefined && first.startsWith(prefix) && this.zk.isCurrent(session)
      ? session
      : undefined;
  }

  /** Leaves the election: this session's node goes, and the next candidate leads. */
  async leave(): Promise<void> {
    const listing = await this.zk.tryGetChildren(this.node);
    let sessionId: string | undefined;
    try {
      sessionId = this.zk.session.id;
    } catch {
      return; // no session: its node is gone with it
    }
    const ours = (listing?.children ?? []).filter((name) =>
      name.startsWith(`${LATCH_PREFIX}${sessionId}-`),
    );
    await Promise.all(ours.map((name) => this.zk.deleteIfPresent(childPath(this.node, name))));
  }

  private async candidates(): Promise<string[]> {
    const watch = this.armed ? undefined : this.watcher;
    const listing = await this.zk.tryGetChildren(this.node, watch);
    if (watch !== undefined && listing !== undefined) this.armed = true;
    return listing?.children ?? [];
  }
}
