import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.ts';
import { ROOT } from './sourceCli.ts';

/** Where the browser tests save a screenshot of each page they visit (a test artifact, not committed). */
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');

/**
 * A headless Chromium with a fresh profile, for the file: no sandbox (CI runs as root), no GPU,
 * no QUIC, no background traffic, and no network beyond loopback (any other request is aborted
 * and recorded: the dashboard must load nothing from elsewhere). Closed after the file.
 */
export function useBrowser(credentials?: { username: string; password: string }): {
  page(): Promise<Page>;
  offsite: string[];
} {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (bash .ci/run does), or set SLUICE_CHROMIUM`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
  const offsite: string[] = [];
  let context: Promise<BrowserContext> | undefined;
  const open = () =>
    (context ??= chromium
      .launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1280, height: 860 },
        ...(credentials ? { httpCredentials: credentials } : {}),
        args: [...CHROMIUM_ARGS],
      })
      .then(async (ctx) => {
        await ctx.route('**/*', (route) => {
          const host = new URL(route.request().url()).hostname;
          if (host === '127.0.0.1' || host === 'localhost') return route.continue();
          offsite.push(route.request().url());
          return route.abort();
        });
        return ctx;
      }));
  afterAll(async () => {
    if (context) await (await context).close();
    rmSync(profile, { recursive: true, force: true });
  });
  return {
    offsite,
    async page() {
      return (await open()).newPage();
    },
  };
}

/** Saves a full-page screenshot as a test artifact (and returns its path). */
export async function screenshot(page: Page, name: string, also?: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  if (also) await page.screenshot({ path: also, fullPage: false });
  return path;
}
