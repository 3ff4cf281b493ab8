import { html, type SafeHtml } from './html.ts';
import { noticeText } from './notices.ts';
import type { PageContext } from './PageContext.ts';

const SECTIONS = [
  ['overview', '/', 'Overview'],
  ['jobs', '/jobs', 'Jobs'],
  ['dead', '/dead', 'Dead jobs'],
  ['failures', '/failures', 'Failures'],
  ['workers', '/workers', 'Workers'],
  ['batches', '/batches', 'Batches'],
  ['schedules', '/schedules', 'Schedules'],
  ['search', '/search', 'Search'],
] as const;

/**
 * The page shell: navigation, the notice an action left (?notice=, by code: notices.ts),
 * and <main>, whose content the refresh script replaces with a fresh rendering every refreshMs.
 * Assets are the package's own files (no CDN): the page works offline.
 */
export function layout(ctx: PageContext, page: { title: string; section: string; body: SafeHtml }): SafeHtml {
  const asset = (file: string) => ctx.href(`/assets/${file}`);
  const notice = noticeText(ctx.query);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · sluice</title>
<link rel="stylesheet" href="${asset('uPlot.min.css')}">
<link rel="stylesheet" href="${asset('dashboard.css')}">
<script src="${asset('uPlot.iife.min.js')}" defer></script>
<script src="${asset('dashboard.js')}" defer></script>
</head>
<body data-refresh-ms="${ctx.options.refreshMs}">
<header>
<a class="brand" href="${ctx.href('/')}">sluice</a>
<nav>${SECTIONS.map(
    ([id, path, label]) =>
      html`<a href="${ctx.href(path)}"${id === page.section ? html` aria-current="page"` : ''}>${label}</a>`,
  )}</nav>
<form class="jump" method="get" action="${ctx.href('/jobs')}"><input name="id" inputmode="numeric" placeholder="job id" aria-label="jump to job id"><button>Go</button></form>
<span class="who">${ctx.user}${ctx.options.readOnly ? html` · <b class="readonly">read-only</b>` : ''}</span>
</header>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<main id="content">
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`;
}
