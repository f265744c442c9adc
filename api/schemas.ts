import { z } from 'zod';
import { MAX_ORDER_TOTAL_CENTS } from '../domain/order-total.js';
import { FULFILLMENT_STEPS, ORDER_STATUSES, UNCLAIMED_STATUSES } from '../domain/statuses.js';

/**
 * The shapes of everything the API accepts. Amounts are integer cents; ids are bounded strings.
 * The OpenAPI document is generated from these: a rule JSON Schema cannot state (a refinement, a
 * trim before the length check) says so in its description.
 */
const trimmed =
  'surrounding whitespace is trimmed first; the length limits apply to what remains; no control characters, and well-formed Unicode (no lone surrogate)';
/**
 * Free text: trimmed, bounded, and without control characters (C0, DEL, C1), which nobody types and
 * PostgreSQL refuses in part (NUL), nor a lone UTF-16 surrogate (`"\ud800"` in JSON), which has no
 * UTF-8 form and which Prisma's query engine refuses: every string input that is not a pattern or an
 * enum is one. The surrogate rule is a refinement, since a JSON Schema pattern could not carry it to
 * every validator.
 */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    // eslint-disable-next-line no-control-regex -- finding control characters is this check's job
    .regex(/^[^\x00-\x1f\x7f-\x9f]*$/, 'no control characters')
    .refine((value) => !/\p{Cs}/u.test(value), 'must be well-formed Unicode (no lone surrogate)')
    .meta({ description: trimmed });
const id = text(128);
/** A customer's id, in a body, a query or a token's `sub`. */
export const CustomerId = id;
const cents = z.number().int().min(0).max(100_000_000);
/** A payment's amount: up to the largest order total, so every order the service places can be paid. */
const paymentCents = z.number().int().min(0).max(MAX_ORDER_TOTAL_CENTS);

export const SkuParam = z.object({ sku: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)') });
export const CouponParam = z.object({
  code: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)'),
});
/**
 * An order's id: any UUID, read in lower case, as PostgreSQL writes it and the order's workflow id
 * spells it (`order-<id>`), so an id in capitals reaches the same order and its workflow.
 */
const orderId = z.uuid().transform((uuid) => uuid.toLowerCase());
export const OrderIdParam = z.object({ id: orderId });

export const ProductBody = z.strictObject({
  name: text(200),
  priceCents: cents,
  stock: z.number().int().min(0).max(10_000_000),
});

export const CouponBody = z.strictObject({
  discountCents: cents,
  customerId: CustomerId.nullable()
    .optional()
    .meta({
      description:
        "the one customer whose orders may use the coupon; null: anyone's. Absent: a new coupon is anyone's, an existing one keeps its customer. " +
        'It can change only while the coupon is AVAILABLE (409 COUPON_IN_USE otherwise)',
    }),
});

export const CreateOrderBody = z.strictObject({
  /** A customer's token names the customer: absent, it is taken from there; present, it must match (403). Operators must name one. */
  customerId: CustomerId.optional(),
  items: z
    .array(z.strictObject({ sku: SkuParam.shape.sku, quantity: z.number().int().min(1).max(1000) }))
    .min(1)
    .max(50)
    .refine((items) => new Set(items.map((i) => i.sku)).size === items.length, 'each sku may appear once')
    .meta({
      // JSON Schema has no "unique by a property": uniqueItems states what it can (no two lines
      // alike), the description the rule itself.
      uniqueItems: true,
      description: 'each sku at most once per order: a second line with the same sku is 400 VALIDATION_FAILED',
    }),
  couponCode: CouponParam.shape.code.optional(),
  email: z.email().max(254).optional().meta({
    description:
      "the customer's email address: the order's emails (placed, payment reminder, paid, cancelled, refunded) go there. Absent: none are sent",
  }),
});
export type CreateOrderBody = z.infer<typeof CreateOrderBody>;

export const IdempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, '1-255 visible ASCII characters');

/** A request the client may send again after an answer was lost: the same key, the same effect. */
export const IdempotencyKeyHeaders = z.object({ 'Idempotency-Key': IdempotencyKey.optional() });

export const ExtendBody = z.strictObject({
  minutes: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60),
});

export const ExtendOpenOrdersBody = z.strictObject({
  minutes: ExtendBody.shape.minutes,
  /** Only this customer's open orders. */
  customerId: id.optional(),
  /** Only open orders whose deadline lies before this moment. */
  expiringBefore: z.iso.datetime({ offset: true }).optional(),
});

export const ListOrdersQuery = z.object({
  status: z.enum(ORDER_STATUSES).optional(),
  customerId: CustomerId.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const PaymentCallbackBody = z.strictObject({
  paymentId: id,
  orderId,
  amountCents: paymentCents,
  paidAt: z.iso.datetime({ offset: true }),
  currency: z
    .string()
    .regex(/^[a-z]{3}$/, 'must be an ISO 4217 code in lower case, e.g. eur')
    .optional()
    .meta({
      description:
        "What the payment was taken in. A payment in another currency than the order's is refunded, never pays it; absent: not compared.",
    }),
});

export const UnclaimedPaymentsQuery = z.object({
  status: z.enum(UNCLAIMED_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * A Stripe event as Stripe posts it: only its envelope is described here, since the official client
 * reads it (adapters/stripe/events.ts) once its signature holds. Loose: Stripe adds fields.
 */
export const StripeEventBody = z
  .looseObject({
    id: z.string(),
    type: z.string(),
    created: z.number().int(),
    data: z.looseObject({ object: z.looseObject({}) }),
  })
  .meta({
    description:
      "A Stripe [Event](https://docs.stripe.com/api/events/object). `payment_intent.succeeded` pays the order named by the intent's `metadata.order_id`; `refund.failed`, and `refund.updated` to `canceled` or `failed`, mark that refund failed; every other type is acknowledged and ignored.",
  });

export const RetryStepParams = z.object({
  id: orderId,
  step: z.enum(FULFILLMENT_STEPS),
});

export const RetryRefundParams = z.object({ id: orderId, paymentId: id });

/**
 * The Temporal codec-server protocol (docs/temporal.md, "The codec endpoints"): Temporal's Payloads
 * in protobuf's JSON form, whose bytes are base64. Other fields a newer Web UI may send are ignored.
 */
// No count or length limits of their own: the body's (4 MB, 413) bounds them, and limits the body
// would always hit first could never be answered with the 400 the document promises for them.
const Base64 = z.base64();
export const CodecPayload = z.object({
  metadata: z.record(z.string().max(256), Base64).optional(),
  data: Base64.optional(),
});
export const CodecBody = z.object({ payloads: z.array(CodecPayload) });
export const NamespaceHeaders = z.object({
  'X-Namespace': z
    .string()
    .max(1_000)
    .optional()
    .meta({ description: "the Web UI's namespace; one set of keys serves the service's namespace whatever it says" }),
});
