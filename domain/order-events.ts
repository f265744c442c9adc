/**
 * What the shop's own systems hear about an order: one event per status change, written to the
 * outbox (`order_events`) in the transaction of the change and delivered as a signed webhook. The
 * names are the contract (docs/api.md); a consumer subscribes an endpoint to some of them.
 */
export const ORDER_EVENT_TYPES = [
  'order.placed',
  'order.payment_reminder',
  'order.paid',
  'order.awaiting_funds',
  'order.cancelled',
  'order.deadline_extended',
  'order.refunded',
  'order.refund_failed',
  'order.fulfillment_step_done',
  'order.fulfillment_step_dead_lettered',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];
