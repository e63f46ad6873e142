/**
 * The alert webhook (`zk-plan worker --alert-webhook`): a redirect is a failed delivery, never
 * followed (fetch would re-POST the event to whatever host it names), and no failure names more of
 * the URL than its origin: Slack-style webhooks keep their secret in the path.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { plainLog, logUndeliveredAlert } from '../../src/cli/worker-log.js';
import { webhookListener } from '../../src/alerts/webhook.js';
import type { PlanEvent } from '../../src/alerts/plan-events.js';
import { InvalidArgumentError } from '../../src/errors/usage-errors.js';

const SECRET_PATH = '/services/T0000/B0000/s3cr3tT0k3n';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/** A server on 127.0.0.1; resolves with its origin and the requests it got (method, path, body). */
async function serve(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ origin: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += String(chunk)));
    request.on('end', () => {
      received.push(`${request.method} ${request.url} ${body}`);
      answer(request, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const event: PlanEvent = {
  id: 'plan-failed~1',
  kind: 'plan:failed',
  plan: '/plans/plan-0000000003',
  counts: {
    total: 1,
    done: 0,
    remaining: 1,
    runnable: 0,
    running: 0,
    waiting: 0,
    blocked: 0,
    failed: 1,
    finishing: 0,
    building: 0,
    cancelled: 0,
    unstarted: 0,
  },
  at: new Date(0),
};

/** What delivering `event` to `url` threw (undefined when the webhook took it). */
async function deliver(url: string): Promise<Error | undefined> {
  try {
    await webhookListener(url, 5_000)(event);
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** The worker's log line for the failed delivery (plain format), as `zk-plan worker` writes it. */
function loggedFailure(error: Error): string {
  const lines: string[] = [];
  logUndeliveredAlert(
    plainLog('info', (line) => lines.push(line)),
    error,
    event.id,
  );
  return lines.join('\n');
}

describe('the alert webhook', () => {
  it('does not follow a 307: the server it points to never gets the event, and the failure names the origin only', async () => {
    const elsewhere = await serve((_request, response) => response.end('thanks'));
    const hook = await serve((_request, response) => {
      response.writeHead(307, { location: `${elsewhere.origin}/collect` });
      response.end();
    });
    const error = await deliver(`${hook.origin}${SECRET_PATH}?token=abc`);

    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]).toContain('"event":"plan:failed"');
    expect(elsewhere.received).toEqual([]); // the 307 was not followed

    expect(error).toBeInstanceOf(Error);
    const line = loggedFailure(error as Error);
    expect(line).toContain(`the webhook at ${hook.origin}`);
    expect(line).toMatch(/redirect, which is not followed/);
    for (const secret of ['s3cr3t', 'services', 'token', 'abc', 'collect'])
      expect(line).not.toContain(secret);
    expect((error as Error).cause).toBeUndefined(); // nothing that a structured log would print further
  });

  it('names the origin only when the webhook answers an error status or cannot be reached', async () => {
    const failing = await serve((_request, response) => {
      response.statusCode = 500;
      response.end(`no route for ${SECRET_PATH}`);
    });
    const answered = await deliver(`${failing.origin}${SECRET_PATH}`);
    expect(loggedFailure(answered as Error)).toBe(
      `zk-plan worker: alert ${event.id} not delivered: the webhook at ${failing.origin} answered 500 to plan:failed of /plans/plan-0000000003`,
    );

    const closed = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()?.close(resolve)); // nothing listens there any more
    const unreachable = await deliver(`${closed.origin}${SECRET_PATH}`);
    const line = loggedFailure(unreachable as Error);
    expect(line).toContain(`the webhook at ${closed.origin} did not take plan:failed`);
    expect(line).toContain('ECONNREFUSED');
    expect(line).not.toContain('s3cr3t');
  });

  it('still delivers to a webhook that answers 2xx', async () => {
    const hook = await serve((_request, response) => response.end('ok'));
    expect(await deliver(`${hook.origin}${SECRET_PATH}`)).toBeUndefined();
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]).toMatch(new RegExp(`^POST ${SECRET_PATH} `));
  });

  it('refuses a URL it cannot use without quoting it', () => {
    for (const url of [
      `hooks.example${SECRET_PATH}`,
      `ftp://hooks.example${SECRET_PATH}`,
      `https://user:s3cr3t@hooks.example/x`,
    ]) {
      const error = (() => {
        try {
          webhookListener(url, 5_000);
          return undefined;
        } catch (caught) {
          return caught as Error;
        }
      })();
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error?.message).not.toContain('s3cr3t');
    }
  });
});
