import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { WAITING_FOR, WaitingForKey, type WaitingFor } from '../domain/search-attributes.js';

/** One thing out of the ordinary a run waits on. */
export interface Wait {
  on: WaitingFor;
  /** When the wait began (workflow time, ms). */
  since: number;
  /** What holds the run, in words: the item an operator reads. */
  detail?: string;
  /** What the party it waits on answered last, and how many times it has been asked. */
  lastAnswer?: { answer: string; tries: number };
}

/**
 * What a run waits on out of the ordinary. The WaitingFor search attribute names it, so a Web UI
 * filter lists the runs that wait on the same thing, and the current details say since when and
 * what was last answered. The attribute is written only when it changes: each upsert is a billable
 * action, and a run on its normal path opens no wait, so it writes none.
 */
export class Waits {
  private readonly open = new Map<string, Wait>();
  /** What the search attribute says now (undefined: absent); a run that continues another starts with that run's. */
  private published = workflowInfo().typedSearchAttributes.get(WaitingForKey) as WaitingFor | undefined;

  constructor(
    /** Refreshes the run's Web UI details, which describe these waits. */
    private readonly showDetails: () => void,
  ) {}

  /** Opens or updates (a new answer) the wait `key`, or closes it (null). */
  note(key: string, wait: Wait | null): void {
    if (wait === null) this.open.delete(key);
    else this.open.set(key, wait);
    const now = this.first();
    if (now !== this.published) {
      upsertSearchAttributes([{ key: WaitingForKey, value: now ?? null }]);
      this.published = now;
    }
    this.showDetails();
  }

  /** Each open wait in words, e.g. "Closing the payment at the provider since T (last answer: unavailable, 4 tries)". */
  get described(): string[] {
    return [...this.open.values()].map(describe);
  }

  /** The open wait listed first in WAITING_FOR, which the search attribute names. */
  private first(): WaitingFor | undefined {
    const open = new Set([...this.open.values()].map((w) => w.on));
    return (Object.keys(WAITING_FOR) as WaitingFor[]).find((on) => open.has(on));
  }
}

function describe({ on, since, detail, lastAnswer }: Wait): string {
  const what = WAITING_FOR[on];
  const words = [`${what.charAt(0).toUpperCase()}${what.slice(1)} since ${new Date(since).toISOString()}`];
  if (lastAnswer) {
    words.push(`(last answer: ${lastAnswer.answer}, ${lastAnswer.tries} ${lastAnswer.tries === 1 ? 'try' : 'tries'})`);
  }
  return detail ? `${words.join(' ')}: ${detail}` : words.join(' ');
}
