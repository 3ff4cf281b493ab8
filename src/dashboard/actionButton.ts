import { html, type SafeHtml } from './html.ts';
import { isNoticeParam } from './notices.ts';
import type { PageContext } from './PageContext.ts';

/**
 * A POST form for one action (nothing at all in read-only mode): the CSRF token, where to come
 * back to, the action's fields, and for a destructive action the question the browser asks
 * (dashboard.js) before it sets `confirmed` — without which the server refuses the action.
 */
export function actionButton(
  ctx: PageContext,
  action: { name: string; label: string; fields: Record<string, string | number>; confirm?: string; danger?: boolean },
): SafeHtml {
  if (ctx.options.readOnly) return html``;
  const back = ctx.href(ctx.path, Object.fromEntries([...ctx.query].filter(([key]) => !isNoticeParam(key))));
  return html`<form class="action" method="post" action="${ctx.href(`/actions/${action.name}`)}"${
    action.confirm ? html` data-confirm="${action.confirm}"` : ''
  }><input type="hidden" name="csrf" value="${ctx.csrf}"><input type="hidden" name="return" value="${back}">${Object.entries(
    action.fields,
  ).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${String(value)}">`,
  )}${action.confirm ? html`<input type="hidden" name="confirmed" value="">` : ''}<button class="${
    action.danger ? 'danger' : ''
  }" data-action="${action.name}">${action.label}</button></form>`;
}
