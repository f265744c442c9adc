import { upsertSearchAttributes } from '@temporalio/workflow';
import { NeedsAttentionKey } from '../domain/search-attributes.js';

/**
 * What an operator must look at in one run, each with the words that say what to do. The
 * NeedsAttention search attribute is true while anything is open, so `NeedsAttention = true` in
 * the Web UI lists every such order, and the current details spell the items out.
 */
export class Attention {
  private readonly open = new Map<string, string>();
  /** What the search attribute says now; undefined until first written. */
  private published: boolean | undefined;

  constructor(
    /** Refreshes the run's Web UI details, which list these items. */
    private readonly showDetails: () => void,
    /**
     * Runs from before the lean shape wrote the attribute at every change of a fulfillment step,
     * flipped or not, and replay must issue the same commands; lean runs write it when it flips.
     */
    private readonly writeEveryChange = false,
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

  /** Changes one item without publishing: for a caller that reports its changes itself (fulfillment). */
  set(key: string, todo: string | null): void {
    if (todo === null) this.open.delete(key);
    else this.open.set(key, todo);
  }

  /** Something an operator might look at changed: the attribute is written if it must be. */
  changed(): void {
    if (this.writeEveryChange || this.needed !== (this.published ?? false)) this.publish();
    else this.showDetails();
  }

  publish(): void {
    upsertSearchAttributes([{ key: NeedsAttentionKey, value: this.needed }]);
    this.published = this.needed;
    this.showDetails();
  }
}
