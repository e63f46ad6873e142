/**
 * The znode tree of `MemoryZooKeeper`: nodes, stats, sequential names and ZooKeeper's error
 * precedence (as a real 3.8 server answers, checked by test/support/zk-contract.ts), with no
 * sessions, watches or delivery.
 */
import type { ZkStat } from '../zk/native-client.js';
import type { CreateMode } from '../zk/zk-client-types.js';

/** The C client's result codes the double answers with (the same numbers `ZkError` maps). */
export const RC = {
  OK: 0,
  CONNECTION_LOSS: -4,
  BAD_ARGUMENTS: -8,
  NO_NODE: -101,
  BAD_VERSION: -103,
  NO_CHILDREN_FOR_EPHEMERALS: -108,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  CLOSING: -116,
} as const;

/** What a real server reports as `ephemeralOwner` of a persistent node (through the native client). */
export const PERSISTENT_OWNER = '0';

/** An operation refused by the tree, with the result code the server would answer. */
export class ZnodeFailure extends Error {
  readonly rc: number;

  constructor(rc: number, path: string) {
    // Thrown for every refused operation and caught at once by the server, which answers with its
    // code: its stack is never read, and capturing one cost more than the rest of the operation.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`znode operation on ${path} failed with rc ${rc}`);
    Error.stackTraceLimit = stackTraceLimit;
    this.rc = rc;
  }
}

interface Znode {
  data: Buffer;
  version: number;
  /** Children changes, creations and deletions both: the stat's cversion. */
  cversion: number;
  /**
   * Children ever created: what a sequential name ends in. A real 3.8 server does not count
   * deletions here, although they advance `cversion`.
   */
  childCreations: number;
  czxid: number;
  mzxid: number;
  pzxid: number;
  ctime: number;
  mtime: number;
  ephemeralOwner: string;
  /** In creation order; `childNames` scrambles it on the way out. */
  readonly children: Map<string, Znode>;
}

/**
 * The native client (node-zookeeper) sends a `null` value as the four bytes "null" (it converts
 * the argument to a string), so a node written with `null` never reads back as `null` on a real
 * server; the double stores the same bytes so that code relying on `null` fails here too.
 */
export function storedBytes(data: Buffer | null): Buffer {
  return data === null ? Buffer.from('null') : Buffer.from(data);
}

/**
 * One or more segments, each a slash and then at least one character that is neither a slash nor
 * NUL, and not `.` or `..` alone: no empty segment, no trailing slash. One test per operation sent,
 * where splitting the path into segments cost more.
 */
const VALID_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/\u0000]+)+$/;

/** The path checks the C client makes before sending (it answers BAD_ARGUMENTS without a round trip). */
export function isValidPath(path: string, mode: CreateMode | undefined): boolean {
  if (path === '/') return true;
  const sequential = mode?.endsWith('sequential') ?? false;
  return VALID_PATH.test(sequential && path.endsWith('/') ? `${path}0000000000` : path);
}

export function parentPathOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index <= 0 ? '/' : path.slice(0, index);
}

function joinPath(parent: string, name: string): string {
  return parent === '/' ? `/${name}` : `${parent}/${name}`;
}

export class MemoryTree {
  private zxid = 0;
  private readonly root: Znode;
  /**
   * Every node by its path, the root's included: a lookup is one map read instead of a walk down
   * the path's segments (the simulations look nodes up several times per operation).
   */
  private readonly byPath = new Map<string, Znode>();

  constructor(private readonly clock: () => number) {
    this.root = this.newNode(storedBytes(Buffer.alloc(0)), PERSISTENT_OWNER);
    this.byPath.set('/', this.root);
    // A real server always has these; code listing "/" must cope with them.
    this.create('/zookeeper', Buffer.alloc(0), 'persistent', PERSISTENT_OWNER);
    this.create('/zookeeper/config', Buffer.alloc(0), 'persistent', PERSISTENT_OWNER);
    this.create('/zookeeper/quota', Buffer.alloc(0), 'persistent', PERSISTENT_OWNER);
  }

  has(path: string): boolean {
    return this.lookup(path) !== undefined;
  }

  stat(path: string): ZkStat {
    return statOf(this.require(path));
  }

  data(path: string): Buffer {
    return Buffer.from(this.require(path).data);
  }

  /** Child names in the server's order, which is deliberately not creation (nor name) order. */
  childNames(path: string): string[] {
    return scrambled([...this.require(path).children.keys()]);
  }

  sortedChildNames(path: string): string[] {
    return [...this.require(path).children.keys()].sort();
  }

  isEphemeral(path: string): boolean {
    return this.require(path).ephemeralOwner !== PERSISTENT_OWNER;
  }

  /** Creates a node; `owner` is the session id for an ephemeral mode. Resolves the created path. */
  create(path: string, data: Buffer | null, mode: CreateMode, owner: string): string {
    if (path === '/') throw new ZnodeFailure(RC.NODE_EXISTS, path);
    const parentPath = parentPathOf(path);
    const parent = this.lookup(parentPath);
    if (parent === undefined) throw new ZnodeFailure(RC.NO_NODE, path);
    const createdPath = mode.endsWith('sequential')
      ? `${path}${String(parent.childCreations).padStart(10, '0')}`
      : path;
    const name = createdPath.slice(parentPath === '/' ? 1 : parentPath.length + 1);
    if (parent.children.has(name)) throw new ZnodeFailure(RC.NODE_EXISTS, createdPath);
    if (parent.ephemeralOwner !== PERSISTENT_OWNER)
      throw new ZnodeFailure(RC.NO_CHILDREN_FOR_EPHEMERALS, createdPath);
    const node = this.newNode(
      storedBytes(data),
      mode.startsWith('ephemeral') ? owner : PERSISTENT_OWNER,
    );
    parent.children.set(name, node);
    this.byPath.set(createdPath, node);
    parent.cversion += 1;
    parent.childCreations += 1;
    parent.pzxid = node.czxid;
    return createdPath;
  }

  setData(path: string, data: Buffer | null, version: number): ZkStat {
    const node = this.require(path);
    if (version !== -1 && version !== node.version) throw new ZnodeFailure(RC.BAD_VERSION, path);
    node.data = storedBytes(data);
    node.version += 1;
    node.mzxid = ++this.zxid;
    node.mtime = this.clock();
    return statOf(node);
  }

  /** Deletes a node; the version is checked before emptiness, as on a real server. */
  delete(path: string, version: number): void {
    if (path === '/') throw new ZnodeFailure(RC.BAD_ARGUMENTS, path);
    const node = this.require(path);
    if (version !== -1 && version !== node.version) throw new ZnodeFailure(RC.BAD_VERSION, path);
    if (node.children.size > 0) throw new ZnodeFailure(RC.NOT_EMPTY, path);
    const parent = this.require(parentPathOf(path));
    parent.children.delete(path.slice(path.lastIndexOf('/') + 1));
    this.byPath.delete(path);
    parent.cversion += 1;
    parent.pzxid = ++this.zxid;
  }

  /** Paths of the nodes `owner` holds as ephemerals, deepest first. */
  ephemeralsOf(owner: string): string[] {
    const found: string[] = [];
    const visit = (path: string, node: Znode): void => {
      for (const [name, child] of node.children) visit(joinPath(path, name), child);
      if (node.ephemeralOwner === owner) found.push(path);
    };
    visit('/', this.root);
    return found;
  }

  /** An indented listing of the subtree at `path`, for failure messages. */
  dump(path: string): string {
    const top = this.lookup(path);
    if (top === undefined) return `${path} (absent)`;
    const lines: string[] = [];
    const visit = (name: string, node: Znode, depth: number): void => {
      const owner =
        node.ephemeralOwner === PERSISTENT_OWNER ? '' : ` [ephemeral ${node.ephemeralOwner}]`;
      lines.push(`${'  '.repeat(depth)}${name}${owner} v${node.version} = ${preview(node.data)}`);
      for (const childName of [...node.children.keys()].sort())
        visit(childName, node.children.get(childName) as Znode, depth + 1);
    };
    visit(path, top, 0);
    return lines.join('\n');
  }

  private require(path: string): Znode {
    const node = this.lookup(path);
    if (node === undefined) throw new ZnodeFailure(RC.NO_NODE, path);
    return node;
  }

  private lookup(path: string): Znode | undefined {
    // Nodes are made only on valid paths (the client checks them), so a path with a leading slash is
    // found by its text exactly when the walk below would find it. Without one (an inspection call
    // may pass such a path), the walk decides, as it always did.
    if (path.startsWith('/')) return this.byPath.get(path);
    let node: Znode | undefined = this.root;
    for (const segment of path.slice(1).split('/')) {
      node = node.children.get(segment);
      if (node === undefined) return undefined;
    }
    return node;
  }

  private newNode(data: Buffer, ephemeralOwner: string): Znode {
    const zxid = ++this.zxid;
    const now = this.clock();
    return {
      data,
      version: 0,
      cversion: 0,
      childCreations: 0,
      czxid: zxid,
      mzxid: zxid,
      pzxid: zxid,
      ctime: now,
      mtime: now,
      ephemeralOwner,
      children: new Map(),
    };
  }
}

function statOf(node: Znode): ZkStat {
  return {
    czxid: node.czxid,
    mzxid: node.mzxid,
    pzxid: node.pzxid,
    ctime: new Date(node.ctime),
    mtime: new Date(node.mtime),
    version: node.version,
    cversion: node.cversion,
    aversion: 0,
    ephemeralOwner: node.ephemeralOwner,
    dataLength: node.data.length,
    numChildren: node.children.size,
  };
}

function preview(data: Buffer): string {
  if (data.length === 0) return "''";
  const text = data.toString('utf8');
  // eslint-disable-next-line no-control-regex
  const shown = /^[^\u0000-\u0008\u000e-\u001f\ufffd]*$/.test(text)
    ? JSON.stringify(text)
    : `0x${data.toString('hex')}`;
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}

/** FNV-1a: a stable hash, so the scrambled order is the same on every run. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Hash order (like the HashSet a real server lists from), nudged so that it is never creation order,
 * and for three or more children never name order either: code that forgets to sort fails at once.
 */
function scrambled(creationOrder: readonly string[]): string[] {
  // Each name's hash once, not once per comparison.
  const hashes = new Map(creationOrder.map((name) => [name, hashOf(name)]));
  const byHash = [...creationOrder].sort(
    (a, b) => (hashes.get(a) as number) - (hashes.get(b) as number) || (a < b ? -1 : 1),
  );
  if (creationOrder.length < 2) return byHash;
  const byName = [...creationOrder].sort();
  const avoided = (order: readonly string[]): boolean =>
    sameOrder(order, creationOrder) || (creationOrder.length >= 3 && sameOrder(order, byName));
  let order = byHash;
  // Rotations of distinct names differ from one another, so at most two turns avoid both orders.
  for (let turn = 0; turn < 2 && avoided(order); turn++)
    order = [...order.slice(1), ...order.slice(0, 1)];
  return order;
}

function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((name, index) => name === b[index]);
}
