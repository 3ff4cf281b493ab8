/**
 * Page loads as an operator sees them: Debian's Chromium (playwright-core, headless, a fresh
 * profile) navigates to each page and reads the Navigation Timing entry — request start to the
 * load event, assets and chart drawing included (assets come from the browser's cache after the
 * warm-up, as they would for an operator). Null when no Chromium is installed.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/chromium.ts';
import { median } from './median.ts';

/** Median load time (ms) of each URL over `runs` navigations after one warm-up, or null without a Chromium. */
export async function browserLoadTimes(
  urls: readonly string[],
  credentials: { username: string; password: string },
  runs: number,
): Promise<number[] | null> {
  if (!existsSync(CHROMIUM)) return null;
  const profile = mkdtempSync(join(tmpdir(), 'sluice-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
    httpCredentials: credentials,
  });
  try {
    const page = await context.newPage();
    const out: number[] = [];
    for (const url of urls) {
      const times: number[] = [];
      for (let i = 0; i <= runs; i++) {
        await page.goto(url, { waitUntil: 'load' });
        const ms = await page.evaluate(() => {
          const [nav] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
          return nav ? nav.loadEventEnd - nav.startTime : Number.NaN;
        });
        if (i > 0) times.push(ms);
      }
      out.push(median(times));
    }
    return out;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
