/**
 * Page loads as an operator sees them: Chromium (findChromium: SLUICE_CHROMIUM, the system's, else
 * the npm package's; playwright-core, headless, a fresh profile) navigates to each page and reads
 * the Navigation Timing entry — request start to the load event, assets and chart drawing included
 * (assets come from the browser's cache after the warm-up, as they would for an operator). Null,
 * saying why, when no Chromium is found.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions, type FoundChromium, findChromium } from '../test/helpers/findChromium.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';

/** Median load time (ms) of each URL over `runs` navigations after one warm-up, or null without a Chromium. */
export async function browserLoadTimes(
  urls: readonly string[],
  credentials: { username: string; password: string },
  runs: number,
): Promise<number[] | null> {
  let found: FoundChromium;
  try {
    found = await findChromium();
  } catch (error) {
    progress(`  no browser figures: ${(error as Error).message}`);
    return null;
  }
  progress(`  Chromium from ${found.source}`);
  const profile = mkdtempSync(join(tmpdir(), 'sluice-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    ...chromiumLaunchOptions(found),
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
