import { upsertSearchAttributes } from '@temporalio/workflow';
import { NeedsAttentionKey } from '../domain/search-attributes.js';

/**
 * What an operator must look at in one run, each with the words that say what to do. The
 * NeedsAttention search attribute is true while anything is open, so `NeedsAttention = true` in
 * the Web UI lists every such order, and the current details spell the items out.
 */
export class Attention {
  private readonly open = new Map<string, string>();
  /** What the search attribute says now: written only when it flips, so a run costs no extra events. */
  private published = false;

  constructor(
    /** Refreshes the run's Web UI details, which list these items. */
    private readonly showDetails: () => void,
  ) {}

  get items(): string[] {
    return [...this.open.values()];
  }

  /** Opens (with what to do) or closes (null) one item. */
  note(key: string, todo: string | null): void {
    if (todo === null) this.open.delete(key);
    else this.open.set(key, todo);
    const needed = this.open.size > 0;
    if (needed !== this.published) {
      upsertSearchAttributes([{ key: NeedsAttentionKey, value: needed }]);
      this.published = needed;
    }
    this.showDetails();
  }
}
