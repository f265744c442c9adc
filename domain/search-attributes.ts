import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The custom search attributes operators filter on in the Temporal Web UI. Defined once: the
 * workflow upserts them, the API sets them at start, and the embedded Temporal Server and the test servers
 * register exactly this list.
 */
export const OrderStatusKey = defineSearchAttributeKey('OrderStatus', SearchAttributeType.KEYWORD);
export const CustomerIdKey = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const OrderExpiresAtKey = defineSearchAttributeKey('OrderExpiresAt', SearchAttributeType.DATETIME);

/** True while a step has exhausted its retries and waits for an operator (the dead-letter list). */
export const NeedsAttentionKey = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);

export const SEARCH_ATTRIBUTES = [OrderStatusKey, CustomerIdKey, OrderExpiresAtKey, NeedsAttentionKey] as const;
