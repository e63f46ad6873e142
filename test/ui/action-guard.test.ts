/** The web view's defence of tokenless actions: served address × request headers → allowed, or refused with a code. */
import { describe, expect, it } from 'vitest';
import {
  normalizedAuthority,
  refuseForeignRequest,
  servedAuthorities,
  type ActionRequestHeaders,
} from '../../src/ui/action-guard.js';

const V4 = servedAuthorities('127.0.0.1', 8080);
const V6 = servedAuthorities('::1', 8080);

const codeOf = (served: readonly string[], headers: ActionRequestHeaders): string =>
  refuseForeignRequest(served, headers)?.code ?? 'ALLOWED';

describe('servedAuthorities', () => {
  it('is the bound address with its port, and localhost beside 127.0.0.1 and ::1 only', () => {
    expect(V4).toEqual(['127.0.0.1:8080', 'localhost:8080']);
    expect(V6).toEqual(['[::1]:8080', 'localhost:8080']);
    expect(servedAuthorities('[::1]', 8080)).toEqual(['[::1]:8080', 'localhost:8080']);
    // Another loopback address is not what `localhost` resolves to.
    expect(servedAuthorities('127.0.0.2', 8080)).toEqual(['127.0.0.2:8080']);
    // Port 80 is written without it, as a browser sends Host and Origin.
    expect(servedAuthorities('127.0.0.1', 80)).toEqual(['127.0.0.1', 'localhost']);
  });

  it('normalises as a browser does, and refuses what is no authority', () => {
    expect(normalizedAuthority('LOCALHOST:8080')).toBe('localhost:8080');
    expect(normalizedAuthority('[0:0:0:0:0:0:0:1]:8080')).toBe('[::1]:8080');
    for (const bad of ['', 'a b', 'user@127.0.0.1:8080', '127.0.0.1:8080/x', '[::1', ':99999'])
      expect(normalizedAuthority(bad), bad).toBeUndefined();
  });
});

describe('refuseForeignRequest', () => {
  it('lets the view’s own page through, under the address and under localhost, on IPv4 and IPv6', () => {
    expect(codeOf(V4, { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' })).toBe('ALLOWED');
    expect(codeOf(V4, { host: 'localhost:8080', origin: 'http://localhost:8080' })).toBe('ALLOWED');
    expect(codeOf(V6, { host: '[::1]:8080', origin: 'http://[::1]:8080' })).toBe('ALLOWED');
    expect(codeOf(V6, { host: 'localhost:8080', origin: 'http://localhost:8080' })).toBe('ALLOWED');
    const port80 = servedAuthorities('127.0.0.1', 80);
    expect(codeOf(port80, { host: '127.0.0.1', origin: 'http://127.0.0.1' })).toBe('ALLOWED');
  });

  it('refuses a Host the view is not served under: rebound names, another port, the other family', () => {
    for (const host of [
      'evil.example:8080', // DNS rebinding: the attacker's name, resolving to 127.0.0.1
      '127.0.0.1.nip.io:8080',
      'localhost.evil.example:8080',
      '127.0.0.1:8081', // another port: a tunnel or forwarded port
      '127.0.0.1', // port 80 implied
      '127.0.0.2:8080',
      '[::1]:8080', // bound on IPv4 only
      '',
    ])
      expect(codeOf(V4, { host, origin: `http://${host}` }), host).toBe('HOST_MISMATCH');
    expect(codeOf(V4, { origin: 'http://127.0.0.1:8080' })).toBe('HOST_MISMATCH'); // no Host at all
    expect(codeOf(V6, { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' })).toBe(
      'HOST_MISMATCH',
    );
  });

  it('refuses another site’s Origin, a null one, and localhost for 127.0.0.1 (another origin)', () => {
    const host = '127.0.0.1:8080';
    for (const origin of [
      'https://evil.example',
      'http://evil.example:8080',
      'null', // sandboxed frame, file: or data: page, a redirect across sites
      'http://localhost:8080', // same machine, another origin
      'https://127.0.0.1:8080', // another scheme
      'http://127.0.0.1:8081',
      'http://127.0.0.1:8080/', // not how a browser writes an origin
    ])
      expect(codeOf(V4, { host, origin }), origin).toBe('CROSS_ORIGIN');
  });

  it('without Origin, takes Sec-Fetch-Site: same-origin only, and refuses a request with neither', () => {
    const host = '127.0.0.1:8080';
    expect(codeOf(V4, { host, 'sec-fetch-site': 'same-origin' })).toBe('ALLOWED');
    for (const site of ['same-site', 'cross-site', 'none'])
      expect(codeOf(V4, { host, 'sec-fetch-site': site }), site).toBe('ORIGIN_MISSING');
    expect(codeOf(V4, { host })).toBe('ORIGIN_MISSING');
    // A matching Origin wins over a contradicting Sec-Fetch-Site only when it is the view's: a foreign one never passes.
    expect(
      codeOf(V4, { host, origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }),
    ).toBe('CROSS_ORIGIN');
  });

  it('refuses a body a form can post, even from the view’s own origin', () => {
    const own = { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' };
    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'text/plain;charset=UTF-8',
      'TEXT/PLAIN',
    ])
      expect(codeOf(V4, { ...own, 'content-type': type }), type).toBe('FORM_POST');
    expect(codeOf(V4, { ...own, 'content-type': 'application/json' })).toBe('ALLOWED');
  });

  it('says what to do in its message', () => {
    expect(refuseForeignRequest(V4, { host: 'evil.example:8080' })?.message).toContain(
      'http://127.0.0.1:8080/ or http://localhost:8080/',
    );
    expect(refuseForeignRequest(V4, { host: '127.0.0.1:8080' })?.message).toContain(
      'Origin: http://127.0.0.1:8080',
    );
  });
});
