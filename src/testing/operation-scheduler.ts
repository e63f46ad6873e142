/**
 * When the operations sent by `MemoryZkClient`s reach the in-memory server. The default applies
 * each one on a later microtask, in the order sent; `ManualScheduler` lets a test or a seeded
 * simulation pick which client's next operation lands, to force an interleaving.
 */

/** One operation a client has sent and the server has not applied yet. */
export interface ScheduledOperation {
  /** The sending client's name (unique per server). */
  readonly clientName: string;
  readonly op: string;
  readonly path: string;
  /** False once it was answered without being applied (connection lost, session expired, closed, crashed). */
  readonly live: boolean;
  /** Applies it on the server and answers its caller; does nothing unless `live`. */
  apply(): void;
}

/** Decides when each operation a MemoryZooKeeper's clients send lands: at once (immediateScheduler), or when a test says (ManualScheduler). */
export interface OperationScheduler {
  /** Called once per operation sent; must apply the operations of one client in the order given. */
  enqueue(operation: ScheduledOperation): void;
}

/** Applies every operation on a later microtask, in the order sent (across all clients). */
export const immediateScheduler: OperationScheduler = {
  enqueue(operation) {
    queueMicrotask(() => operation.apply());
  },
};

/** Holds every operation until the test says which client's next one lands (FIFO per client). */
export class ManualScheduler implements OperationScheduler {
  private readonly queues = new Map<string, ScheduledOperation[]>();

  enqueue(operation: ScheduledOperation): void {
    const queue = this.queues.get(operation.clientName);
    if (queue === undefined) this.queues.set(operation.clientName, [operation]);
    else queue.push(operation);
  }

  /** Names of the clients with operations waiting, in the order they first sent one. */
  pending(): string[] {
    // Called several times per step of a simulation: no copy of a queue unless it holds answered operations.
    const names: string[] = [];
    for (const [clientName, queue] of this.queues) {
      if (queue.some((operation) => !operation.live))
        this.queues.set(
          clientName,
          queue.filter((operation) => operation.live),
        );
      if (queue.some((operation) => operation.live)) names.push(clientName);
    }
    return names;
  }

  /** The operations of one client still waiting, head first. */
  queued(clientName: string): ReadonlyArray<{ readonly op: string; readonly path: string }> {
    const queue = this.queues.get(clientName) ?? [];
    const live = queue.filter((operation) => operation.live);
    this.queues.set(clientName, live); // forget the ones answered without being applied
    return live.map(({ op, path }) => ({ op, path }));
  }

  /** Applies the head operation of `clientName`'s queue and answers it; throws when it has none. */
  step(clientName: string): { readonly op: string; readonly path: string } {
    const queue = this.queues.get(clientName) ?? [];
    for (let operation = queue.shift(); operation !== undefined; operation = queue.shift()) {
      if (!operation.live) continue;
      operation.apply();
      return { op: operation.op, path: operation.path };
    }
    throw new Error(
      `ManualScheduler: client ${clientName} has no operation waiting (pending: ${this.pending().join(', ') || 'none'})`,
    );
  }

  /**
   * Applies waiting operations, one client at a time in `pending()` order, until none is left;
   * `flush` runs between steps so that replies (and the operations they cause) come in. Returns the number applied.
   */
  async drain(
    flush: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve)),
    limit = 100_000,
  ): Promise<number> {
    let applied = 0;
    for (;;) {
      await flush();
      const [next] = this.pending();
      if (next === undefined) return applied;
      if (applied >= limit)
        throw new Error(`ManualScheduler.drain: still busy after ${limit} operations`);
      this.step(next);
      applied += 1;
    }
  }
}
