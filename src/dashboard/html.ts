/**
 * HTML that is safe to send: every value interpolated into the `html` template is escaped unless
 * it is itself SafeHtml (made by `html` or, for markup sluice wrote itself, `trusted`). This is
 * the one place the dashboard turns values into markup; nothing concatenates strings into a page.
 */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Values a template takes: text (escaped), numbers, nothing (empty), markup, or lists of them. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an element's content or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<td>${name}</td>\`` escapes `name`. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i] as HtmlValue) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Markup written by sluice itself (never a value from the database or the request). */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * A value as JSON inside `<script type="application/json">`: `<`, `>` and `&` become \u escapes,
 * so no string in the data can close the script element or open a comment.
 */
export function jsonScript(id: string, value: unknown): SafeHtml {
  const json = JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return html`<script type="application/json" id="${id}">${trusted(json)}</script>`;
}
