/**
 * HTML built only by the `html` tag: every value interpolated into it is escaped, unless it is
 * itself HTML built by the tag. So a template cannot forget to escape a value, and an address or id
 * a customer chose can never become markup.
 */
export class Html {
  constructor(readonly markup: string) {}
}

type HtmlValue = string | number | Html | readonly Html[];

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  return new Html(strings.reduce((out, text, i) => out + text + (i < values.length ? render(values[i]!) : ''), ''));
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}
