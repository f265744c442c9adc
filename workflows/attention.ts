import { upsertSearchAttributes } from '@temporalio/workflow';
import { NeedsAttentionKey } from '../domain/search-attributes.js';

/**
 * What an operator must look at in one run, each with the words that say what to do. The
 * NeedsAttention search attribute is true while anything is open, so `NeedsAttention = true` in
 * the Web UI lists every such order, and the current details spell the items out.
 */
export class Attention {
  private readonly open = new Map<string, string>();

  constructor(
    /** Refreshes the run's Web UI details, which list these items. */
    private readonly showDetails: () => void,
  ) {}

  get needed(): boolean {
    return this.open.size > 0;
  }

  get items(): string[] {
    return [...this.open.values()];
  }

  /** Opens (with what to do) or closes (null) one item; the search attribute is written when it flips. */
  note(key: string, todo: string | null): void {
    const before = this.needed;
    this.set(key, todo);
    if (this.needed !== before) this.publish();
    else this.showDetails();
  }

  /** Changes one item without publishing: for a caller that publishes at fixed points (fulfillment). */
  set(key: string, todo: string | null): void {
    if (todo === null) this.open.delete(key);
    else this.open.set(key, todo);
  }

  publish(): void {
    upsertSearchAttributes([{ key: NeedsAttentionKey, value: this.needed }]);
    this.showDetails();
  }
}
