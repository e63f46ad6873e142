/**
 * The built-in `shell` task function's name and params: `call('shell', { command, args?, cwd?,
 * env?, shell? })`. Pure: checking a call's params, wherever a shell task is written or run.
 */

/** The name of the built-in shell task function: not one a FunctionRegistry takes. */
export const SHELL_FUNCTION = 'shell';

/**
 * The one param of `call('shell', params)`.
 *
 * @category Plans and tasks
 */
export interface ShellParams {
  /**
   * The command line, run by `shell` (`/bin/sh -c <command>`); or, with `args` and without
   * `shell`, the program to run (looked up in the worker's PATH), with no shell in between.
   */
  readonly command: string;
  /**
   * Arguments passed as they are, with no quoting to get right: without a shell, the program's
   * arguments; with one, the shell's positional parameters `$1`, `$2`, … of `command`.
   */
  readonly args?: readonly string[];
  /** Working directory of the command. @defaultValue the worker's */
  readonly cwd?: string;
  /** Variables set for the command, on top of the worker's environment. @defaultValue none */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The shell that runs `command`: `true` for `/bin/sh`, or a shell's path (`'/bin/bash'`);
   * `false` runs `command` as a program. @defaultValue true without `args`, false with them
   */
  readonly shell?: boolean | string;
}

/**
 * What the shell task returns when its command exits 0.
 *
 * @category Plans and tasks
 */
export interface ShellResult {
  readonly exitCode: 0;
  /** What the command wrote on stdout, its first `DEFAULTS.shell.maxStdoutBytes` bytes (64 KiB); all of it goes to the task's log. */
  readonly stdout: string;
}

const PARAM_KEYS: ReadonlySet<string> = new Set(['command', 'args', 'cwd', 'env', 'shell']);

/** The default shell, as `sh -c` runs everywhere POSIX is. */
const DEFAULT_SHELL = '/bin/sh';

/** What the shell task runs: the program and its argv, worked out from the params. */
export interface ShellInvocation {
  readonly file: string;
  readonly argv: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  /** The command as the task gave it, for messages. */
  readonly command: string;
}

/** What is wrong with a shell call's params, or undefined when they are `[{ command, args?, cwd?, env?, shell? }]`. */
export function shellParamsProblem(params: readonly unknown[]): string | undefined {
  if (params.length !== 1)
    return `expected one param, an object { command, … }, got ${params.length}`;
  const [value] = params;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'its param must be an object { command, args?, cwd?, env?, shell? }';
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => !PARAM_KEYS.has(key));
  if (unknown !== undefined)
    return `unknown field "${unknown}" (a shell call has command, args, cwd, env and shell)`;
  const { command, args, cwd, env, shell } = record;
  if (typeof command !== 'string' || command.trim() === '')
    return '"command" must be a non-empty string';
  if (command.includes('\0')) return '"command" must not hold a NUL character';
  if (
    args !== undefined &&
    (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string' || arg.includes('\0')))
  )
    return '"args" must be an array of strings without NUL characters';
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd === '' || cwd.includes('\0')))
    return '"cwd" must be a non-empty path';
  if (
    shell !== undefined &&
    typeof shell !== 'boolean' &&
    (typeof shell !== 'string' || shell === '' || shell.includes('\0'))
  )
    return '"shell" must be true, false or the path of a shell';
  return env === undefined ? undefined : envProblem(env);
}

function envProblem(env: unknown): string | undefined {
  if (typeof env !== 'object' || env === null || Array.isArray(env))
    return '"env" must be an object of strings { NAME: "value" }';
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0'))
      return `"env" has the name ${JSON.stringify(name)}: a name is non-empty, without "=" or NUL`;
    if (typeof value !== 'string' || value.includes('\0'))
      return `"env.${name}" must be a string without NUL characters`;
  }
  return undefined;
}

/**
 * The program and argv a checked call runs: `command` as a program when `shell` is false (or
 * left out with `args` given), else `<shell> -c <command> <shell> <args…>`, where the args are
 * the shell's `$1`… (the `$0` between is the shell's name, as `sh -c` expects).
 */
export function shellInvocation(params: ShellParams, baseEnv: NodeJS.ProcessEnv): ShellInvocation {
  const args = params.args ?? [];
  const shell = params.shell ?? params.args === undefined;
  const env = { ...definedOnly(baseEnv), ...params.env };
  if (shell === false)
    return { file: params.command, argv: [...args], cwd: params.cwd, env, command: params.command };
  const file = shell === true ? DEFAULT_SHELL : shell;
  const argv = args.length > 0 ? ['-c', params.command, file, ...args] : ['-c', params.command];
  return { file, argv, cwd: params.cwd, env, command: params.command };
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) result[name] = value;
  return result;
}
