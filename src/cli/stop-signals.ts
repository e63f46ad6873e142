/** The signals that ask a long-running command (worker, ui, dev-server) to stop. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface StopSignalOptions {
  /** Called for every stop signal after the first (e.g. to stop at once instead of draining). */
  readonly onRepeat?: (signal: NodeJS.Signals) => void;
}

/**
 * SIGINT and SIGTERM, caught from the moment this is made until `dispose()`: the first one settles
 * `first`, every later one goes to `onRepeat`.
 *
 * Make it before the command says it runs (the worker's start line, the ui's URL, the dev server's
 * connect string). A signal nobody listens to kills a Node process by the default action, so a
 * process manager that stops the command as soon as it reads that line would otherwise kill it
 * instead of stopping it. The gap is not negligible: the worker, listening only after its start
 * line, had its listeners in place 0.7–1.3 ms after writing it, longer than a reader of the line
 * took to answer with SIGTERM.
 *
 * The same listeners stay in place until `dispose()`: taking one away and adding the next after the
 * first signal would leave a moment in which a second signal kills the process.
 */
export class StopSignals {
  /** The first stop signal to arrive. */
  readonly first: Promise<NodeJS.Signals>;
  private resolveFirst: ((signal: NodeJS.Signals) => void) | undefined;
  private received = 0;

  constructor(private readonly options: StopSignalOptions = {}) {
    this.first = new Promise((resolve) => {
      this.resolveFirst = resolve;
    });
    for (const name of STOP_SIGNALS) process.on(name, this.onSignal);
  }

  /** Stops listening: from then on the signals have their default action again (unless someone else listens). */
  dispose(): void {
    for (const name of STOP_SIGNALS) process.off(name, this.onSignal);
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.received += 1;
    if (this.received === 1) this.resolveFirst?.(signal);
    else this.options.onRepeat?.(signal);
  };
}
