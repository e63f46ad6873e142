/**
 * Headless Chromium for the web view's browser tests: Debian's /usr/bin/chromium driven by
 * playwright-core (no browser download), started with the flags this machine's closed network needs
 * (without the background-networking ones it tries, and fails, to reach Google's hosts at start).
 */
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A new headless Chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
