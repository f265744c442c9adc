import ms, { type StringValue } from 'ms';

/**
 * The one rule for how long a run waits before asking again something that did not answer (our
 * database, a provider): `first`, then twice as long each time, never longer than `cap`. The cap
 * is what bounds what an outage costs, so a cap of C minutes holds an outage to 60/C rounds an
 * hour once it is reached. A round of a call failing through our own outage is one attempt the
 * server retries (one action, no event: workflows/keep-trying.ts); a round of the closing's
 * questions to a provider that answers UNAVAILABLE is one call and one durable timer, two actions
 * and about six events.
 */
export interface BackoffRule {
  first: StringValue;
  cap: StringValue;
}

/**
 * Our own outages (the database): 5 s, 10 s, … 3 minutes. A round is one attempt the server
 * retries, one action, so an hour of outage costs about 25 (5 to reach the cap, then 20 an hour),
 * and the database is tried again within 3 minutes of coming back.
 */
export const OUTAGE_BACKOFF: BackoffRule = { first: '5 seconds', cap: '3 minutes' };

/**
 * A payment provider that cannot answer the closing: 5 s, 10 s, … 10 minutes. A round here is
 * two actions (the question's local-activity task and the timer), so the cap is longer than our
 * own outages' to hold an hour of the provider's outage to 12 rounds, 28 actions with the hold's
 * attributes (3 minutes made it 54). A blip is asked again within seconds, as before; a provider back from a long
 * outage is asked again within 10 minutes, and meets a tenth of the held orders each minute
 * rather than a third. Until then the order keeps its stock and can still be paid.
 */
export const PROVIDER_BACKOFF: BackoffRule = { first: '5 seconds', cap: '10 minutes' };

/** The waits of one thing asked again and again: the next is twice the last, up to the cap. */
export class Backoff {
  private readonly firstMs: number;
  private readonly capMs: number;
  private nextMs: number;

  constructor(rule: BackoffRule) {
    this.firstMs = ms(rule.first);
    this.capMs = ms(rule.cap);
    this.nextMs = this.firstMs;
  }

  /** How long to wait before the next round; each call doubles the following one, up to the cap. */
  next(): number {
    const waitMs = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, this.capMs);
    return waitMs;
  }

  /** The thing answered: a later silence starts from `first` again. */
  reset(): void {
    this.nextMs = this.firstMs;
  }
}
