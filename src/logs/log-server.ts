/**
 * The worker's log server, as DolphinScheduler's: it serves the whole logs its FileLogSink wrote, to
 * `zk-plan logs --full` and the web view's link, for as long as the worker lives. Each try's record
 * in ZooKeeper names the file's URL (`fullLog.url`). It serves files of the sink's directory only
 * (`GET /logs/<path below the directory>`, JSON lines), nothing else, read-only; it listens on
 * 127.0.0.1 unless told another address, and has no authentication: give it an address only a
 * trusted network reaches, as for the metrics server.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { relative, resolve, sep } from 'node:path';
import type { FileLogSink } from './file-log-sink.js';
import { DEFAULTS } from '../config/defaults.js';

/**
 * Options of startLogServer: where it listens.
 *
 * @category Logs
 */
export interface LogServerOptions {
  /** Port to listen on; 0 picks a free one. */
  readonly port: number;
  /** Address to listen on. @defaultValue DEFAULTS.listenHost ('127.0.0.1') */
  readonly host?: string;
}

/**
 * A running log server (startLogServer): its URL, and `close()` to stop it.
 *
 * @category Logs
 */
export interface LogServer {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  /** Stops listening; resolves once the server is closed. */
  close(): Promise<void>;
}

const LOGS_PREFIX = '/logs/';

/**
 * Starts serving the sink's files, and makes the sink name their URLs in the records it is asked for.
 *
 * @category Logs
 */
export async function startLogServer(
  sink: FileLogSink,
  options: LogServerOptions,
): Promise<LogServer> {
  const root = resolve(sink.dir);
  const server = createServer((request, response) => {
    serve(root, request, response).catch(() => response.destroy());
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? DEFAULTS.listenHost, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  sink.serveAt(
    (file) =>
      `${url}${LOGS_PREFIX}${relative(root, file).split(sep).map(encodeURIComponent).join('/')}`,
  );
  return {
    url,
    close: () =>
      new Promise<void>((resolveClose) => {
        sink.serveAt(undefined);
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

async function serve(
  root: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const answer = (status: number, text: string): void => {
    response.writeHead(status, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    });
    response.end(`${text}\n`);
  };
  if (request.method !== 'GET' && request.method !== 'HEAD') return answer(405, 'only GET');
  const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (!pathname.startsWith(LOGS_PREFIX)) return answer(404, 'nothing here: logs are under /logs/');
  let wanted: string;
  try {
    wanted = resolve(
      root,
      ...pathname.slice(LOGS_PREFIX.length).split('/').map(decodeURIComponent),
    );
  } catch {
    return answer(400, 'a malformed path');
  }
  // Only the sink's own files: nothing outside its directory (`..`, an absolute path), and only its JSON-lines files.
  if (!wanted.startsWith(`${root}${sep}`) || !wanted.endsWith('.jsonl'))
    return answer(404, 'not a log file of this worker');
  const info = await stat(wanted).catch(() => undefined);
  if (info === undefined || !info.isFile())
    return answer(
      404,
      'no such log (its plan was deleted and the file pruned, or it is on another worker)',
    );
  response.writeHead(200, {
    'Content-Type': 'application/x-ndjson; charset=utf-8',
    'Content-Length': String(info.size),
    'X-Content-Type-Options': 'nosniff',
  });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  createReadStream(wanted)
    .on('error', () => response.destroy())
    .pipe(response);
}
