/**
 * Debian's Chromium and how sluice starts it, for the browser tests (browser.ts) and the
 * dashboard bench (bench/browserLoad.ts). No vitest import: the bench runs outside vitest.
 */

/** apt-get install chromium (.ci/run installs it when missing), or SLUICE_CHROMIUM. */
export const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, no sandbox (CI runs as root), no GPU, no QUIC, no background traffic to Google. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
