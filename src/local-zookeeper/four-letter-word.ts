import { connect } from 'node:net';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Sends a ZooKeeper four-letter-word command (`srvr`, `ruok`, `stat`, `mntr`, ...)
 * to a server on this machine and resolves with its whole answer.
 *
 * The server answers and closes the connection, so the answer is everything
 * read until the end of the stream.
 *
 * @param host - a loopback host only (`127.0.0.1`, `localhost` or `::1`)
 * @param port - the server's client port
 * @param cmd - the four-letter command, e.g. `srvr`
 * @param timeoutMs - rejects when the whole exchange takes longer than this
 * @throws Error when the host is not loopback, the connection fails or the timeout passes
 */
export function fourLetterWord(
  host: string,
  port: number,
  cmd: string,
  timeoutMs: number,
): Promise<string> {
  if (!LOOPBACK_HOSTS.has(host)) {
    return Promise.reject(new Error(`fourLetterWord only talks to loopback hosts, not ${host}`));
  }
  if (!/^[a-z]{4}$/.test(cmd)) {
    return Promise.reject(new Error(`"${cmd}" is not a four-letter word command`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`four-letter word "${cmd}" to ${host}:${port} timed out after ${timeoutMs} ms`),
      );
    }, timeoutMs);
    socket.on('connect', () => socket.write(cmd));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}
