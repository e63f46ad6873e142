/** `zk-plan ui`'s action flags: --allow-actions (token) and --read-only exclude each other, before anything connects. */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';

function uiCommand(): { program: Command; errors: string[] } {
  const program = buildProgram();
  const errors: string[] = [];
  const ui = program.commands.find((command) => command.name() === 'ui');
  if (ui === undefined) throw new Error('no ui command');
  for (const command of [program, ui]) {
    command.exitOverride();
    command.configureOutput({ writeErr: (text) => errors.push(text), writeOut: () => undefined });
  }
  return { program, errors };
}

describe('zk-plan ui flags', () => {
  it('refuses --allow-actions with --read-only, naming both', async () => {
    const { program, errors } = uiCommand();
    await expect(
      program.parseAsync(['ui', '/plans', '--allow-actions', '--read-only'], { from: 'user' }),
    ).rejects.toMatchObject({ code: 'commander.conflictingOption' });
    expect(errors.join('')).toMatch(/--allow-actions.*--read-only|--read-only.*--allow-actions/);
  });

  it('documents both in its help, and what --json says of the actions', () => {
    const { program } = uiCommand();
    const ui = program.commands.find((command) => command.name() === 'ui');
    let help = '';
    ui?.configureOutput({ writeOut: (text) => (help += text) });
    ui?.outputHelp();
    expect(help).toContain('--read-only');
    expect(help).toContain('--allow-actions');
    expect(help).toContain('"actions": "same-origin" | "token" | "off"');
  });
});
