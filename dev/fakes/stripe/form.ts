/** A decoded form value: Stripe's bracket notation (`metadata[order_id]=…`, `expand[0]=…`) as nested objects. */
export type FormValue = string | { [key: string]: FormValue };

/** Decodes an `application/x-www-form-urlencoded` body or query string the way Stripe reads one. */
export function decodeForm(text: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const [head, ...rest] = name.split('[');
    const path = [head!, ...rest.map((part) => part.replace(/\]$/, ''))];
    let node = root;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      node = node[key] = typeof next === 'object' ? next : {};
    }
    node[path.at(-1)!] = value;
  }
  return root;
}

/** The values of a list field (`expand[0]=a&expand[1]=b`). */
export function listOf(value: FormValue | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : Object.values(value).filter((v) => typeof v === 'string');
}

export function textOf(value: FormValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
