import { z } from 'zod';
import { MAX_ORDER_TOTAL_CENTS } from '../domain/order-total.js';
import {
  CANCEL_REASONS,
  COUPON_STATUSES,
  FULFILLMENT_STEPS,
  ORDER_STATUSES,
  UNCLAIMED_STATUSES,
  PAYMENT_STATUSES,
  STEP_STATUSES,
} from '../domain/statuses.js';

/**
 * The shapes of what the API answers with, for the OpenAPI document (api/openapi.ts). Strict, so
 * test/api/openapi-errors.test.ts fails when a route answers with a field the document does not
 * name; the routes' own types are inferred from these where they build the answer.
 */
const timestamp = z.iso.datetime({ offset: true });
const StepStatus = z.enum(STEP_STATUSES);

const productAvailability = {
  sku: z.string(),
  name: z.string(),
  priceCents: z.int(),
  available: z.int().meta({ description: 'units that can be ordered now' }),
};

/** What anyone may read of a product: whether it can be ordered, not how it sells. */
export const ProductAvailability = z
  .strictObject(productAvailability)
  .meta({ id: 'ProductAvailability', description: 'a product as anyone sees it: no sales figures' });
export type ProductAvailability = z.infer<typeof ProductAvailability>;

/** A product as an operator sees it: its stock, the sales figures included. */
export const ProductView = z
  .strictObject({
    ...productAvailability,
    reserved: z.int().meta({ description: 'units held by unpaid orders' }),
    sold: z.int().meta({ description: 'units of paid orders' }),
  })
  .meta({
    id: 'Product',
    description: 'a product as an operator sees it: available + reserved + sold is every unit ever stocked',
  });
export type ProductView = z.infer<typeof ProductView>;

/** `GET /products/:sku`: the operator's view to an operator, the availability to anyone else. */
export const ProductRead = z.union([ProductView, ProductAvailability]);

export const CouponView = z
  .strictObject({
    code: z.string(),
    discountCents: z.int(),
    status: z
      .enum(COUPON_STATUSES)
      .meta({ description: 'single-use: LOCKED by an unpaid order, REDEEMED once it is paid' }),
    orderId: z.uuid().nullable(),
    customerId: z.string().nullable().meta({ description: "the one customer whose orders may use it; null: anyone's" }),
  })
  .meta({ id: 'Coupon' });
export type CouponView = z.infer<typeof CouponView>;

const OrderItem = z.strictObject({ sku: z.string(), quantity: z.int(), unitPriceCents: z.int() });

/** The order's payment at a provider that cancels payments, for the customer's client to pay it. */
const OrderPaymentView = z
  .strictObject({
    paymentId: z.string().meta({ description: "the provider's id of the payment (Stripe: the PaymentIntent)" }),
    clientSecret: z
      .string()
      .meta({ description: "what the customer's client needs to pay it (Stripe.js: the client secret)" }),
  })
  .nullable()
  .meta({
    id: 'OrderPayment',
    description:
      "null unless the order is payable (never once it is paid or cancelled), with a callback-only provider, while the provider could not create it yet, and in an operator's view",
  });

/** Never above the largest total placement accepts. */
const orderTotal = z.int().min(0).max(MAX_ORDER_TOTAL_CENTS);

export const PlacedOrderView = z
  .strictObject({
    id: z.uuid(),
    customerId: z.string(),
    status: z.enum(ORDER_STATUSES),
    totalCents: orderTotal,
    expiresAt: timestamp.meta({ description: 'the payment deadline, by the database clock' }),
    couponCode: z.string().nullable(),
    items: z.array(OrderItem),
    workflowId: z.string().meta({ description: "the order's Temporal workflow, `order-<id>`" }),
    payment: OrderPaymentView,
  })
  .meta({ id: 'PlacedOrder' });

export const OrderView = z
  .strictObject({
    id: z.uuid(),
    customerId: z.string(),
    status: z.enum(ORDER_STATUSES),
    payable: z.boolean().meta({
      description:
        'false once expiresAt has passed (even before the cancellation has landed) or its payment is being closed at the provider',
    }),
    totalCents: orderTotal,
    createdAt: timestamp,
    expiresAt: timestamp,
    paidAt: timestamp.nullable(),
    cancelledAt: timestamp.nullable(),
    cancelReason: z.enum(CANCEL_REASONS).nullable(),
    items: z.array(OrderItem),
    couponCode: z.string().nullable(),
    workflowId: z.string(),
    payment: OrderPaymentView,
    payments: z.array(
      z.strictObject({
        paymentId: z.string(),
        amountCents: z.int(),
        status: z.enum(PAYMENT_STATUSES),
        refundError: z
          .string()
          .optional()
          .meta({ description: 'why the provider rejected the refund (REFUND_FAILED)' }),
      }),
    ),
    fulfillment: z
      .strictObject(
        Object.fromEntries(FULFILLMENT_STEPS.map((step) => [step, StepStatus])) as Record<
          (typeof FULFILLMENT_STEPS)[number],
          typeof StepStatus
        >,
      )
      .nullable()
      .meta({ description: 'null until the order is paid' }),
  })
  .meta({ id: 'Order' });
export type OrderView = z.infer<typeof OrderView>;

export const OrderList = z.strictObject({ orders: z.array(OrderView).meta({ description: 'newest first' }) });

export const CancelRequested = z.strictObject({ id: z.uuid(), cancelRequested: z.literal(true) });

export const DeadlineExtended = z.strictObject({ expiresAt: timestamp });

export const ForceCancelled = z.strictObject({ orderId: z.uuid(), status: z.enum(ORDER_STATUSES) });

export const OpenOrdersExtended = z.strictObject({
  extended: z.int().min(0).meta({ description: 'how many open orders got the extra minutes' }),
  minutes: z.int(),
});

export const StepRetried = z.strictObject({ step: z.enum(FULFILLMENT_STEPS), status: StepStatus });

export const RefundRetried = z.strictObject({ paymentId: z.string(), status: z.enum(PAYMENT_STATUSES) });

export const PaymentAccepted = z.strictObject({ accepted: z.literal(true), paymentId: z.string() });

/** What the Stripe webhook did with an event: handed its payment over durably, or ignored it (logged). */
export const StripeEventAcknowledged = z.strictObject({
  eventId: z.string(),
  outcome: z.enum([
    'PAYMENT_ACCEPTED',
    'UNCLAIMED_RECORDED',
    'PAYMENT_FAILURE_ACCEPTED',
    'REFUND_FAILURE_ACCEPTED',
    'IGNORED',
  ]),
});

export const UnclaimedPaymentList = z.strictObject({
  payments: z
    .array(
      z.strictObject({
        paymentId: z.string(),
        namedOrder: z.string().nullable().meta({ description: 'the order its metadata names, as it is; null: none' }),
        amountCents: z.number().int(),
        currency: z.string(),
        livemode: z.boolean(),
        connectAccount: z.string().nullable(),
        status: z.enum(UNCLAIMED_STATUSES),
        receivedAt: timestamp,
        refundDueAt: timestamp,
        refundRef: z.string().nullable(),
        refundError: z.string().nullable(),
      }),
    )
    .meta({ description: 'newest first' }),
});

export const OpenApiJson = z.record(z.string(), z.unknown());

export const Health = z.strictObject({ db: z.enum(['ok', 'down']), temporal: z.enum(['ok', 'down']) });
export type Health = z.infer<typeof Health>;

export const UiConfig = z.strictObject({
  temporalUiUrl: z.string(),
  namespace: z.string(),
  devMode: z.boolean().meta({ description: 'FAULTS_ENABLED: the page offers "simulate payment"' }),
});

export const SimulatedPayment = z.strictObject({ paymentId: z.string(), callbackStatus: z.literal(202) });

/** The codec endpoints' answer: the payloads run through the codec, in the request's order and form. */
export const CodecPayloads = z.strictObject({
  payloads: z.array(z.strictObject({ metadata: z.record(z.string(), z.string()), data: z.string() })),
});

export const OperatorSessionStarted = z.strictObject({
  expiresAt: timestamp.meta({ description: 'when the session cookie stops opening anything' }),
});
