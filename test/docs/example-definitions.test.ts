/**
 * The YAML definitions the README and the guide link (examples/definitions/) are valid as they are: read as the
 * CLI reads them, then checked by what `schedule put`, `submit` and `jobs define` check.
 */
import { describe, expect, it } from 'vitest';
import { readDocument } from '../../src/cli/documents.js';
import { resolveJob } from '../../src/jobs/job-definition.js';
import type { JobDefinition } from '../../src/jobs/job-definition.js';
import { resolveSchedule, type ScheduleInput } from '../../src/schedule/schedule-definition.js';
import { checkPlanSpec } from '../../src/spec/plan-spec.js';

describe('examples/definitions', () => {
  it('nightly-report.yaml is a schedule that schedule put accepts', async () => {
    const input = (await readDocument('examples/definitions/nightly-report.yaml')) as ScheduleInput;
    const stored = resolveSchedule(input, undefined, Date.parse('2026-11-26T12:00:00Z'), [
      'extract',
      'report',
    ]);
    expect(stored).toMatchObject({
      name: 'nightly-report',
      cron: '0 30 2 * * *',
      timezone: 'Europe/Berlin',
      overlap: 'skip',
      misfire: 'fireOnce',
    });
    expect(Object.keys((stored.spec as { tasks: object }).tasks)).toEqual(['extract', 'report']);
  });

  it('backup.yaml is a plan spec of shell tasks that submit accepts, whatever the registry holds', async () => {
    const spec = await readDocument('examples/definitions/backup.yaml');
    const checked = checkPlanSpec(spec, { registered: ['extract'], params: { db: 'sales' } });
    expect(checked.order).toEqual(['dump', 'upload']);
    expect(checked.tasks.get('dump')).toMatchObject({
      fn: 'shell',
      params: [{ args: ['sales'], shell: true }],
    });
  });

  it('mailboxes.yaml is a job that jobs define accepts', async () => {
    const input = (await readDocument('examples/definitions/mailboxes.yaml')) as JobDefinition;
    expect(resolveJob(input, new Date())).toMatchObject({
      name: 'mailboxes',
      fn: 'poll-mailbox',
      mode: { everyMs: 60_000 },
      strategy: 'evenly',
    });
  });
});
