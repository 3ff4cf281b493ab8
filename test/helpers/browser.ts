import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { chromiumLaunchOptions, findChromium } from './findChromium.ts';
import { ROOT } from './sourceCli.ts';

/** Where the browser tests save a screenshot of each page they visit (a test artifact, not committed). */
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');

/**
 * A headless Chromium (findChromium: SLUICE_CHROMIUM, the system's, else the npm package's; started
 * as chromiumLaunchOptions says) with a fresh profile, for the file, and no network beyond loopback
 * (any other request is aborted and recorded: the dashboard must load nothing from elsewhere).
 * Started by the first page(); closed after the file.
 */
export function useBrowser(credentials?: { username: string; password: string }): {
  page(): Promise<Page>;
  offsite: string[];
} {
  const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
  const offsite: string[] = [];
  let context: Promise<BrowserContext> | undefined;
  const launch = async (): Promise<BrowserContext> => {
    const ctx = await chromium.launchPersistentContext(profile, {
      ...chromiumLaunchOptions(await findChromium()),
      viewport: { width: 1280, height: 860 },
      ...(credentials ? { httpCredentials: credentials } : {}),
    });
    await ctx.route('**/*', (route) => {
      const host = new URL(route.request().url()).hostname;
      if (host === '127.0.0.1' || host === 'localhost') return route.continue();
      offsite.push(route.request().url());
      return route.abort();
    });
    return ctx;
  };
  const open = () => (context ??= launch());
  afterAll(async () => {
    // A launch that failed has failed its tests already.
    await (await context?.catch(() => undefined))?.close();
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

/** docs/NAME, for a screenshot the docs show: when it is missing, or asked for with SLUICE_DOCS_SCREENSHOTS=1. */
export function docsShot(name: string): string | undefined {
  const path = join(ROOT, 'docs', name);
  return process.env.SLUICE_DOCS_SCREENSHOTS === '1' || !existsSync(path) ? path : undefined;
}
