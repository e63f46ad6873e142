/**
 * Server-Sent Events: a feed's messages written to a browser as they come, with a heartbeat, and
 * ended when the browser leaves, falls behind or the view closes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './http-rules.js';
import { stringifySafe } from './ui-model.js';

const SSE_MAX_BUFFER_BYTES = 8 * 1024 * 1024;
const SSE_HEARTBEAT_MS = 20_000;

/**
 * Answers with an event stream of what `subscribe` delivers; the stream is kept in `streams`
 * while it is open, so that closing the view ends it.
 */
export function openStream<M extends { type: string }>(
  req: IncomingMessage,
  res: ServerResponse,
  streams: Set<ServerResponse>,
  subscribe: (listener: (message: M) => void) => () => void,
): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  streams.add(res);
  let unsubscribe: (() => void) | undefined;
  const heartbeat = setInterval(() => res.write(': ping\n\n'), SSE_HEARTBEAT_MS);
  heartbeat.unref();
  const end = (): void => {
    clearInterval(heartbeat);
    streams.delete(res);
    const stop = unsubscribe;
    unsubscribe = undefined;
    stop?.();
    if (!res.writableEnded) res.end();
  };
  req.on('close', end);
  res.on('error', end);
  const listener = (message: M): void => {
    if (res.writableEnded) return;
    if (res.writableLength > SSE_MAX_BUFFER_BYTES) {
      end(); // a client that does not read: let it reconnect and start from a snapshot
      return;
    }
    const { type, ...payload } = message;
    const data =
      'model' in payload
        ? payload.model
        : 'diff' in payload
          ? payload.diff
          : 'plans' in payload
            ? payload.plans
            : payload;
    res.write(`event: ${type}\ndata: ${stringifySafe(data)}\n\n`);
  };
  unsubscribe = subscribe(listener);
  if (res.writableEnded) end();
}
