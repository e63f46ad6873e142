/**
 * docs/guide/cli.md describes every command of `zk-plan` and every option each takes. The commands
 * come from the program itself (buildProgram registers them all), so a command or option added
 * without a word in the guide fails here; the old README listed 8 of the commands. Unit test: the
 * program is built, never run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';

const GUIDE = readFileSync(
  join(import.meta.dirname, '..', '..', 'docs', 'guide', 'cli.md'),
  'utf8',
);

/** Every command and subcommand, with its full name (`schedule put`), commander's `help` left out. */
function commandsOf(command: Command, prefix = ''): { name: string; command: Command }[] {
  return command.commands
    .filter((sub) => sub.name() !== 'help')
    .flatMap((sub) => {
      const name = `${prefix}${sub.name()}`;
      return [{ name, command: sub }, ...commandsOf(sub, `${name} `)];
    });
}

describe('docs/guide/cli.md', () => {
  const commands = commandsOf(buildProgram());

  it('names every command as `zk-plan <command>`', () => {
    expect(commands.length).toBeGreaterThan(30);
    expect(
      commands.map(({ name }) => name).filter((name) => !GUIDE.includes(`zk-plan ${name}`)),
    ).toEqual([]);
  });

  it("names every command's options", () => {
    const missing = commands.flatMap(({ name, command }) =>
      command.options
        .map((option) => option.long)
        .filter(
          (flag): flag is string =>
            flag !== undefined && flag !== '--help' && !GUIDE.includes(flag),
        )
        .map((flag) => `${name} ${flag}`),
    );
    expect(missing).toEqual([]);
  });
});
