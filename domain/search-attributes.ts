import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { INITIAL_STATUS } from './statuses.js';

/**
 * The custom search attributes operators filter on in the Temporal Web UI. Defined once: the
 * workflow upserts them, and the embedded Temporal Server and the test servers register exactly this
 * list. Temporal indexes them in clear (no payload codec sees them), so none may say who the customer
 * is: the customer id is in the encrypted payloads only (docs/temporal.md, "Search attributes").
 */
export const OrderStatusKey = defineSearchAttributeKey('OrderStatus', SearchAttributeType.KEYWORD);
export const OrderExpiresAtKey = defineSearchAttributeKey('OrderExpiresAt', SearchAttributeType.DATETIME);

/**
 * What an order's run is started with, as the API expects the placement to come out: UNPAID, and the
 * deadline reckoned on the API's clock (the placement's own, on the database's clock, is a moment
 * later). Given at start they cost nothing on Temporal Cloud, where each upsert is a billable action;
 * the run writes them again only where the placed order differs (workflows/order-run.ts).
 */
export function orderAttributesAtStart(expectedExpiresAt: Date): SearchAttributePair[] {
  return [
    { key: OrderStatusKey, value: INITIAL_STATUS.order },
    { key: OrderExpiresAtKey, value: expectedExpiresAt },
  ];
}

/** True while a step has exhausted its retries and waits for an operator (the dead-letter list). */
export const NeedsAttentionKey = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);

/**
 * What a run waits on out of the ordinary, one of WAITING_FOR; absent while it waits only on its
 * normal course (the customer's payment, its own steps), so the normal paths never write it.
 */
export const WaitingForKey = defineSearchAttributeKey('WaitingFor', SearchAttributeType.KEYWORD);

/**
 * The values of WaitingFor, each with the words the Web UI's current details say of it. A new
 * reason to wait is one entry here. When a run waits on two at once, the attribute names the one
 * listed first: an operator's action before the provider's answer.
 */
export const WAITING_FOR = {
  /** Something only an operator can unblock: a refund or a fulfillment step rejected, a close refused. */
  OPERATOR: 'held for an operator',
  /** At the deadline, the provider has not closed the order's payment yet: down, or a bank step under way. */
  PROVIDER_CLOSING: 'closing the payment at the provider',
  /** Past the deadline, the payment's money is on its way (AWAITING_FUNDS): the provider's event decides. */
  FUNDS: "the payment's money, on its way",
} as const;
export type WaitingFor = keyof typeof WAITING_FOR;

export const SEARCH_ATTRIBUTES = [OrderStatusKey, OrderExpiresAtKey, NeedsAttentionKey, WaitingForKey] as const;
