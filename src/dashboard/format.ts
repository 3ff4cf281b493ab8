import { html, type SafeHtml } from './html.ts';

/** How the dashboard writes numbers, durations and times (times in UTC, as the DB clock gave them). */

/** "1,234"; a capped count "10,000+"; a capped count that found none so far "?" (unknown past the cap). */
export function count(n: number, exact = true): string {
  if (!exact && n === 0) return '?';
  return `${n.toLocaleString('en-US')}${exact ? '' : '+'}`;
}

/** A duration in ms as "850 ms", "12 s", "4 min", "3.5 h", "2.0 d"; "—" for null. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

/** "2026-11-24 01:02:03.456" (UTC), "—" for null. */
export function time(date: Date | null | undefined): string {
  if (!date) return '—';
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * A time as `<time>`: the exact UTC time as its text and title, and its instant in `datetime`, from
 * which the page's script writes it relative ("3 min ago", "in 20 s", on the browser's clock) and
 * keeps the exact time on hover. Without the script the exact time shows. "—" for null.
 */
export function when(date: Date | null | undefined): SafeHtml | string {
  if (!date) return '—';
  const exact = time(date);
  return html`<time datetime="${date.toISOString()}" title="${exact} UTC">${exact}</time>`;
}
