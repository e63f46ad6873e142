/**
 * Preloaded (`node --import`) by every worker process the fault harness and the fault tests start,
 * before anything else, tsx included: closes the sockets it inherited from the process that started
 * it (fds 0–2 excepted).
 *
 * Why: the ZooKeeper C client under node-zookeeper 7.3 opens its socket without close-on-exec, so
 * every child spawned while the starting process's client is connected inherits it. Once that
 * process (a test, the harness) closes or loses that connection, the inherited copy keeps the old
 * socket alive, and the starting process's epoll keeps reporting its EOF under the old fd number;
 * when a new ZooKeeper socket reuses that number, node-zookeeper sees events with nothing to
 * process, gives up after 11 of them ("zookeeper_process returned no response too many times") and
 * closes the handle as if the session had expired; every new session fails the same way while the
 * child lives. A worker process closing its inherited copies at start keeps the starting process's
 * own client usable across ZooKeeper restarts. (The workers spawn nothing, so they are not exposed
 * to this themselves.)
 *
 * It must run before tsx, whose esbuild service talks to its own child process over sockets that
 * this would close; and Node 20 loads no TypeScript before tsx. So the preload is plain JavaScript,
 * handed to `--import` as a `data:` URL: it ships inside this module, in the sources and the build
 * alike. Only Linux lists a process's fds in /proc/self/fd; elsewhere it does nothing.
 */
const SOURCE = `
import { closeSync, readdirSync, readlinkSync } from 'node:fs';
if (process.platform === 'linux') {
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    try {
      if (readlinkSync('/proc/self/fd/' + name).startsWith('socket:')) closeSync(fd);
    } catch {
      // gone meanwhile (the fd of readdir itself): nothing to close
    }
  }
}
`;

/** The preload as `node --import` takes it. */
export const CLOSE_INHERITED_SOCKETS = `data:text/javascript,${encodeURIComponent(SOURCE)}`;
