import { describe, expect, it } from 'vitest';
import { shellInvocation, shellParamsProblem } from '../../src/shell/shell-params.js';

describe('shell params', () => {
  it('accept { command, args?, cwd?, env?, shell? } and nothing else', () => {
    expect(shellParamsProblem([{ command: 'ls -l' }])).toBeUndefined();
    expect(
      shellParamsProblem([
        { command: 'ls', args: ['-l'], cwd: '/tmp', env: { A: '1' }, shell: false },
      ]),
    ).toBeUndefined();
    expect(shellParamsProblem([{ command: 'ls' }, 'extra'])).toContain('expected one param');
    expect(shellParamsProblem([{ command: '   ' }])).toContain(
      '"command" must be a non-empty string',
    );
    expect(shellParamsProblem([{ command: 'ls', env: ['A=1'] }])).toContain(
      '"env" must be an object',
    );
  });

  it('run the command line through /bin/sh by default, a program directly when args are given, args as $1… with a shell', () => {
    const env = { PATH: '/usr/bin', UNSET: undefined };
    expect(shellInvocation({ command: 'echo hi' }, env)).toMatchObject({
      file: '/bin/sh',
      argv: ['-c', 'echo hi'],
      env: { PATH: '/usr/bin' },
    });
    expect(shellInvocation({ command: 'ls', args: ['-l'] }, env)).toMatchObject({
      file: 'ls',
      argv: ['-l'],
    });
    expect(
      shellInvocation({ command: 'cat "$1"', args: ['a b'], shell: '/bin/bash' }, env),
    ).toMatchObject({
      file: '/bin/bash',
      argv: ['-c', 'cat "$1"', '/bin/bash', 'a b'],
    });
    expect(shellInvocation({ command: '/bin/true', shell: false }, env)).toMatchObject({
      file: '/bin/true',
      argv: [],
    });
    expect(shellInvocation({ command: 'env', env: { PATH: '/bin', B: '2' } }, env).env).toEqual({
      PATH: '/bin',
      B: '2',
    });
  });
});
