/**
 * A loopback TCP proxy in front of a ZooKeeper server, for the faults a real client only shows
 * through its network: a reply lost after the server applied the request (`drop-replies`, or
 * `loseRepliesFrom` a request of a given kind on, then `cut`), a client cut off long enough for
 * its session to expire (`blackhole`), a connection that drops at once (`cut`), and a slow link
 * (`setLatency`: every chunk, either way, arrives that much later, in order). Only loopback
 * addresses, on both sides.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** What the proxy does with the bytes of each connection. */
export type ProxyMode = 'pass' | 'drop-replies' | 'blackhole';

/** ZooKeeper's request types (OpCode in the Java server), for `loseRepliesFrom`. */
export const OP_CODE = {
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  sync: 9,
  getChildren2: 12,
} as const;

interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  /** When the last chunk sent towards each side is due: a later chunk is never due before it (order kept). */
  dueToUpstream: number;
  dueToClient: number;
  /** Bytes of the client's next request not complete yet. */
  pending: Buffer;
  /** The first frame of a connection is its ConnectRequest, which has no request header. */
  greeted: boolean;
}

/** A loopback proxy in front of one ZooKeeper server, whose links can drop replies, go silent, be cut or slowed. */
export class TcpProxy {
  private mode: ProxyMode = 'pass';
  private latencyMs = 0;
  private readonly links = new Set<Link>();
  /** Replies are dropped from the moment a request of this type is forwarded. */
  private armedOpCode: number | undefined;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards each connection to `targetPort` on 127.0.0.1. */
  static async start(targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string')
      throw new Error('the proxy has no TCP address');
    proxy = new TcpProxy(server, address.port);
    return proxy;
  }

  /** The connect string of the proxy (what a client under test is given). */
  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * From now on, every chunk either way is delivered `ms` later (0: at once); the order of each
   * direction's bytes is kept.
   */
  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /** From now on: forward everything (`pass`), forward requests but drop replies, or forward nothing. */
  setMode(mode: ProxyMode): void {
    this.mode = mode;
  }

  /**
   * Forwards everything until the client sends a request of type `opCode` (see OP_CODE), then drops
   * every reply from that one on (the server applies the request; its client never hears).
   */
  loseRepliesFrom(opCode: number): void {
    this.armedOpCode = opCode;
  }

  /** Drops every open connection at once: the client sees a connection loss and reconnects (to this proxy, in the current mode). */
  cut(): void {
    for (const link of [...this.links]) this.end(link);
  }

  /**
   * Resets every open connection (TCP RST to the client, as from a server that crashed): the
   * client's next send on it fails at once, where after `cut()` the first one may still succeed.
   */
  reset(): void {
    for (const link of [...this.links]) {
      if (!this.links.delete(link)) continue;
      link.client.resetAndDestroy();
      link.upstream.destroy();
    }
  }

  /** Cuts every connection and passes everything again, without delay: the client reconnects at once. */
  restore(): void {
    this.mode = 'pass';
    this.latencyMs = 0;
    this.armedOpCode = undefined;
    this.cut();
  }

  /** Cuts every connection and stops listening. */
  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    const link: Link = {
      client,
      upstream,
      dueToUpstream: 0,
      dueToClient: 0,
      pending: Buffer.alloc(0),
      greeted: false,
    };
    this.links.add(link);
    client.on('data', (bytes) => {
      if (this.mode === 'blackhole') return;
      const types = this.requestTypes(link, bytes);
      if (this.armedOpCode !== undefined && types.includes(this.armedOpCode)) {
        this.armedOpCode = undefined;
        this.mode = 'drop-replies';
      }
      link.dueToUpstream = this.deliver(link, upstream, bytes, link.dueToUpstream);
    });
    upstream.on('data', (bytes) => {
      if (this.mode === 'pass')
        link.dueToClient = this.deliver(link, client, bytes, link.dueToClient);
    });
    const close = (): void => this.end(link);
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  }

  /** Writes `bytes` to `to` now, or after the latency and never before the previous chunk (`previousDue`); returns when it is due. */
  private deliver(link: Link, to: Socket, bytes: Buffer, previousDue: number): number {
    if (this.latencyMs <= 0 && previousDue <= Date.now()) {
      to.write(bytes);
      return previousDue;
    }
    const due = Math.max(Date.now() + this.latencyMs, previousDue);
    setTimeout(() => {
      if (this.links.has(link)) to.write(bytes);
    }, due - Date.now());
    return due;
  }

  /** Reads the client's length-prefixed frames: the types of the requests `bytes` completes. */
  private requestTypes(link: Link, bytes: Buffer): number[] {
    link.pending = Buffer.concat([link.pending, bytes]);
    const types: number[] = [];
    while (link.pending.length >= 4) {
      const length = link.pending.readInt32BE(0);
      if (link.pending.length < 4 + length) break;
      const frame = link.pending.subarray(4, 4 + length);
      link.pending = link.pending.subarray(4 + length);
      if (!link.greeted) {
        link.greeted = true;
        continue;
      }
      // A request header: xid, then the request's type.
      if (frame.length >= 8) types.push(frame.readInt32BE(4));
    }
    return types;
  }

  private end(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.destroy();
    link.upstream.destroy();
  }
}
