/**
 * The messages between the main thread (inline-sandbox.ts) and an inline task's thread
 * (inline-thread.ts). Values cross as superjson text, the encoding zk-plan stores them in, so an
 * input or a result keeps exactly the types it would keep in ZooKeeper.
 */

/** The part of the task context an inline function may see: data only, no container, no host objects. */
export interface InlineContext {
  readonly task: string;
  readonly plan: string;
  readonly workerId: string;
}

/** One run of an inline function, posted to a thread. */
export interface InlineJob {
  readonly id: number;
  readonly source: string;
  readonly ctx: InlineContext;
  /** The arguments, as superjson text. */
  readonly args: string;
  /** Largest encoded result sent back; beyond it the thread reports only the size. */
  readonly maxResultBytes: number;
}

/** What an inline function threw, as it can cross to the main thread. */
export type ThrownReport =
  /** An Error (of the sandbox or not): its name, message, stack and string `code` survive. */
  | {
      readonly kind: 'error';
      readonly name: string;
      readonly message: string;
      readonly stack?: string;
      readonly code?: string;
    }
  /** Anything else superjson could encode, as superjson text. */
  | { readonly kind: 'value'; readonly encoded: string }
  /** A value that could not even be encoded: its String() (or a note that it had none). */
  | { readonly kind: 'text'; readonly text: string };

/** Posted by a thread. */
export type ThreadMessage =
  /** Once, when its modules are loaded: the first job may come. */
  | { readonly type: 'ready' }
  /** As soon as it takes a job, before running anything: the job is being run by this thread. */
  | { readonly type: 'started'; readonly id: number }
  /** The function returned (or its promise resolved) with a value that encodes within the limit. */
  | { readonly type: 'returned'; readonly id: number; readonly encoded: string }
  /** It threw (or its promise rejected). */
  | { readonly type: 'threw'; readonly id: number; readonly thrown: ThrownReport }
  /** Its result holds something zk-plan cannot store (a function, a class instance…): `problem` says what and where. */
  | { readonly type: 'unserializable'; readonly id: number; readonly problem: string }
  /** Its result is `bytes` long once encoded, over the job's maxResultBytes. */
  | { readonly type: 'too-large'; readonly id: number; readonly bytes: number };
