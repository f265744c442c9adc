/**
 * The one place that turns a human duration (`500ms`, `10s`, `30m`, `2h`) into milliseconds.
 * PAYMENT_WINDOW and every other configurable duration go through here, so the accepted
 * format is the same everywhere and a typo fails loudly instead of becoming NaN.
 */
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h)$/;

export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) {
    throw new RangeError(
      `"${text}" is not a duration; use a whole number followed by ms, s, m or h (e.g. 500ms, 10s, 30m, 2h)`,
    );
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms <= 0) throw new RangeError(`"${text}" must be longer than zero`);
  return ms;
}
