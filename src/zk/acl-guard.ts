/**
 * The ACL half of `ZkClient.create`. The native client can only create with ZooKeeper's open ACL
 * (node-zk.cpp's a_create passes ZOO_OPEN_ACL_UNSAFE and takes no ACL), so a configured ACL is set
 * right after the create with setACL (version -1): one more write in `counts`, part of that call.
 *
 * CAVEAT: during that one round trip the new node is world-open (world:anyone, all permissions):
 * any client may read it, change its data or ACL, delete it, or create children under it, and
 * such children keep the open ACL.
 */
import { ZkError, isZkError, zkErrorCodeOf } from '../errors/zk-error.js';
import type { AclEntry } from './acl.js';
import type { ZkAclEntry, ZkStat } from './native-client.js';
import type { WriteOptions, ZkSession } from './zk-client-types.js';

/** The few calls of its client the guard needs (so it does not depend on the client's class). */
export interface AclGuardClient {
  setNativeAcl(path: string, acl: readonly ZkAclEntry[], version: number, fence: ZkSession | undefined): Promise<void>;
  getAcl(path: string): Promise<{ acl: AclEntry[]; stat: ZkStat }>;
  delete(path: string, version?: number, options?: WriteOptions): Promise<void>;
}

/**
 * Sets the configured ACL on a node this client has just created. After CONNECTION_LOSS or
 * OPERATION_TIMEOUT, `submit` sends the setACL again once reconnected (with version -1 it is
 * idempotent). NO_NODE means another client deleted the node meanwhile: the same outcome as a
 * delete right after an ACL'd create. Any other failure (or no reconnection in time) deletes the
 * node again (best effort, so that no world-open node is left behind) and rejects the create with
 * that failure's code; when that delete fails too (e.g. the session is gone), a persistent node
 * stays world-open, and the error says so.
 */
export async function protectCreated(zk: AclGuardClient, path: string, acl: readonly ZkAclEntry[], fence: ZkSession | undefined): Promise<void> {
  try {
    await zk.setNativeAcl(path, acl, -1, fence);
  } catch (error) {
    if (isZkError(error, 'NO_NODE')) return;
    const removed = await zk.delete(path, -1, { fence }).then(
      () => true,
      (deleteError: unknown) => isZkError(deleteError, 'NO_NODE'),
    );
    const rc = error instanceof ZkError ? error.rc : -1;
    throw new ZkError(
      'create',
      rc,
      path,
      `ZooKeeper create of ${path}: the node was created but setting its ACL failed: ${zkErrorCodeOf(rc)} (rc ${rc}); ` +
        (removed ? 'the node was deleted again' : 'the node may remain with the open ACL (world:anyone)'),
      error,
    );
  }
}

/**
 * A resent create answered NODE_EXISTS: the node may be this client's own first try, whose reply
 * was lost before its setACL was sent. Gives it the ACL when it still has the open one (best
 * effort: a node that went, or that this client may not change, is left alone).
 */
export async function protectEcho(zk: AclGuardClient, path: string, acl: readonly ZkAclEntry[], fence: ZkSession | undefined): Promise<void> {
  try {
    const current = await zk.getAcl(path);
    if (current.acl.every((entry) => entry.scheme === 'world')) await zk.setNativeAcl(path, acl, -1, fence);
  } catch {
    // NO_NODE, NO_AUTH, or the connection again: nothing more to do here.
  }
}
