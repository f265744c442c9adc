import { metricMeter, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { NeedsAttentionKey } from '../domain/search-attributes.js';

const raised = metricMeter.createCounter(
  'order_attention_raised_total',
  'items',
  'Items an operator must act on, opened in a run (an order, a late payment, a failed refund: NeedsAttention), by kind: refund, fulfillment, notice, provider, stuck',
);

/**
 * What an operator must look at in one run, each with the words that say what to do. The
 * NeedsAttention search attribute is true while anything is open, so `NeedsAttention = true` in
 * the Web UI lists every such order, and the current details spell the items out.
 */
export class Attention {
  private readonly open = new Map<string, string>();
  /**
   * What the search attribute says now: written only when it flips, so a run costs no extra events.
   * A run that continues another starts with that run's attributes, so it starts from them.
   */
  private published = workflowInfo().typedSearchAttributes.get(NeedsAttentionKey) ?? false;

  constructor(
    /** Refreshes the run's Web UI details, which list these items. */
    private readonly showDetails: () => void,
  ) {}

  get items(): string[] {
    return [...this.open.values()];
  }

  /**
   * Opens (with what to do) or closes (null) one item; its key is `<kind>:<which>`. Each opening is
   * counted by kind (not again while open, nor while a worker replays the run), so a failure that
   * exhausted its retries shows on a dashboard too, not only in the Web UI.
   */
  note(key: string, todo: string | null): void {
    if (todo === null) this.open.delete(key);
    else {
      if (!this.open.has(key)) raised.add(1, { kind: key.split(':')[0]! });
      this.open.set(key, todo);
    }
    const needed = this.open.size > 0;
    if (needed !== this.published) {
      upsertSearchAttributes([{ key: NeedsAttentionKey, value: needed }]);
      this.published = needed;
    }
    this.showDetails();
  }
}
