/**
 * The process group of a shell task's command: the command is spawned detached, so it leads a
 * group of its own that every process it starts (a pipeline, a `&` job, a grandchild) joins unless
 * it leaves on purpose (`setsid`). Stopping the task signals the whole group: SIGTERM, then, after
 * a grace period, SIGKILL to whatever is left. Groups still running when the worker process exits
 * (process.exit, an uncaught error) get SIGKILL from an exit hook; only a SIGKILL of the worker
 * itself leaves them behind.
 */
import { readFile, readdir } from 'node:fs/promises';

/** How often a group being stopped is looked at, to end the wait as soon as it is gone. */
const POLL_MS = 50;

/** Groups of this process's running shell commands, for the exit hook. */
const runningGroups = new Set<number>();
let exitHookInstalled = false;

/** Remembers a group until `forgetGroup`: the worker process kills it if it exits first. */
export function trackGroup(pgid: number): void {
  runningGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const group of runningGroups) signalGroup(group, 'SIGKILL');
  });
}

export function forgetGroup(pgid: number): void {
  runningGroups.delete(pgid);
}

/** How stopping a group ended: every process went on SIGTERM (or had gone already), or SIGKILL was sent after the grace period. */
export type Termination = 'terminated' | 'killed';

/**
 * SIGTERM to the group, then SIGKILL after `graceMs` unless every process of it has gone by then.
 * `onKill` is told before the SIGKILL is sent.
 */
export async function terminateGroup(
  pgid: number,
  graceMs: number,
  onKill: () => void = () => undefined,
): Promise<Termination> {
  if (!signalGroup(pgid, 'SIGTERM')) return 'terminated';
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(POLL_MS, Math.max(1, deadline - performance.now()))),
    );
    if (!(await groupHasLiveMember(pgid))) return 'terminated';
  }
  onKill();
  signalGroup(pgid, 'SIGKILL');
  return 'killed';
}

/**
 * Sends `signal` to every process of the group; false when the group has no process left. Never
 * throws: EPERM (only processes this worker may not signal are left, a setuid program's) counts as
 * a group still there, which the caller then stops waiting for after its grace period.
 */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * True while a process of the group runs. A process that has ended but was not reaped (a zombie:
 * an orphan whose new parent never waits for it, as under a container's init that does not reap,
 * or a Node process as PID 1) still counts for kill(2), so on Linux /proc tells zombies apart.
 */
export async function groupHasLiveMember(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  const pids = await readdir('/proc').catch(() => undefined);
  if (pids === undefined) return true; // no /proc: kill(2) is all there is to go by
  const stats = await Promise.all(
    pids.filter((name) => /^\d+$/.test(name)).map((pid) => readProcStat(Number(pid))),
  );
  return stats.some((stat) => stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z');
}

/** True while the process runs (a zombie does not: it has ended and only waits to be reaped). */
export async function processIsRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  const stat = await readProcStat(pid);
  return stat === undefined || stat.state !== 'Z';
}

/** State and process group from /proc/<pid>/stat; undefined when it cannot be read (gone, or no /proc). */
async function readProcStat(
  pid: number,
): Promise<{ readonly state: string; readonly pgrp: number } | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const pgrp = Number(fields[2]);
  return state === undefined || !Number.isInteger(pgrp) ? undefined : { state, pgrp };
}
