import type { CancelReason, RefundReason } from '../../domain/statuses.js';
import type { Amount, CustomerEmail, CustomerEmailKind } from '../ports/mailer.js';
import { html, type Html } from './html.js';

/**
 * The five customer emails. Each template writes paragraphs once, and both parts are rendered from
 * them, so the text and the HTML part always say the same; values reach the HTML only through the
 * escaping `html` tag.
 */

/** A run of text, or one to stand out (bold in HTML, as it is in text). */
type Segment = string | { strong: string };
type Paragraph = Segment[];

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface RenderOptions {
  /** IANA time zone the deadline is written in (MAIL_TIME_ZONE). */
  timeZone: string;
}

type Template<K extends CustomerEmailKind> = (
  email: Extract<CustomerEmail, { kind: K }>,
  format: Formatters,
) => { subject: string; paragraphs: Paragraph[] };

const TEMPLATES: { [K in CustomerEmailKind]: Template<K> } = {
  placed: (email, f) => ({
    subject:
      email.expiresAt === null
        ? `Your order ${shortRef(email.orderId)} is placed`
        : `Your order ${shortRef(email.orderId)}: please pay by ${f.date(email.expiresAt)}`,
    paragraphs: [
      ['Thank you for your order ', { strong: email.orderId }, '.'],
      ['Total: ', { strong: f.money(email.total) }],
      ...(email.expiresAt === null
        ? []
        : [
            [
              'Please pay by ',
              { strong: f.date(email.expiresAt) },
              '. An order not paid by then is cancelled, and its items go back on sale.',
            ],
          ]),
    ],
  }),
  payment_reminder: (email, f) => ({
    subject: `Reminder: your order ${shortRef(email.orderId)} is not paid yet`,
    paragraphs: [
      ['Your order ', { strong: email.orderId }, ' of ', { strong: f.money(email.total) }, ' has not been paid yet.'],
      ['Please pay by ', { strong: f.date(email.expiresAt) }, '; after that the order is cancelled.'],
      ['If you have just paid, thank you: there is nothing more to do.'],
    ],
  }),
  paid: (email, f) => ({
    subject: `Payment received for your order ${shortRef(email.orderId)}`,
    paragraphs: [
      [
        'We have received your payment of ',
        { strong: f.money(email.total) },
        ' for order ',
        { strong: email.orderId },
        '.',
      ],
      ['Thank you. We are now preparing your order.'],
    ],
  }),
  cancelled: (email) => ({
    subject: `Your order ${shortRef(email.orderId)} has been cancelled`,
    paragraphs: [
      [
        'Your order ',
        { strong: email.orderId },
        ' has been cancelled',
        ...(email.reason === null ? ['.'] : [': ', CANCEL_REASON_WORDS[email.reason], '.']),
      ],
      ['Any payment that still reaches us for it will be refunded.'],
    ],
  }),
  refunded: (email, f) => ({
    subject: `We have refunded ${f.money(email.amount)} for your order ${shortRef(email.orderId)}`,
    paragraphs: [
      [
        'We have refunded ',
        { strong: f.money(email.amount) },
        ' for order ',
        { strong: email.orderId },
        ...(email.reason === null ? ['.'] : [': ', REFUND_REASON_WORDS[email.reason], '.']),
      ],
      ['Depending on your bank, it can take a few days to show in your account.'],
    ],
  }),
};

/** Why an order was cancelled, as the customer reads it. */
export const CANCEL_REASON_WORDS: Record<CancelReason, string> = {
  PAYMENT_TIMEOUT: 'it was not paid before its deadline',
  CUSTOMER: 'you cancelled it',
  PAYMENT_FAILED: 'the payment did not go through',
};

/** Why a payment was given back, as the customer reads it. */
export const REFUND_REASON_WORDS: Record<RefundReason, string> = {
  ORDER_NOT_PAYABLE: 'the payment arrived after the order had been closed',
  AMOUNT_MISMATCH: "the payment did not match the order's total",
  ALREADY_PAID: 'the order had already been paid',
  WRONG_CURRENCY: "the payment was not in the order's currency",
  WRONG_MODE: 'the payment could not be matched to the order',
  FOREIGN_ACCOUNT: 'the payment could not be matched to the order',
  NOT_THE_ORDERS_PAYMENT: 'the payment was not for this order',
};

export function renderCustomerEmail(email: CustomerEmail, options: RenderOptions): RenderedEmail {
  const format = formatters(options);
  // Each kind's template gets its own variant; the union cannot be narrowed through the lookup.
  const template = TEMPLATES[email.kind] as Template<CustomerEmailKind>;
  const { subject, paragraphs } = template(email, format);
  return {
    subject,
    text: paragraphs.map((p) => p.map((s) => (typeof s === 'string' ? s : s.strong)).join('')).join('\n\n') + '\n',
    html: page(subject, paragraphs).markup,
  };
}

function page(title: string, paragraphs: Paragraph[]): Html {
  const body = paragraphs.map(
    (p) => html`<p>${p.map((s) => (typeof s === 'string' ? html`${s}` : html`<strong>${s.strong}</strong>`))}</p>`,
  );
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title}</title>
      </head>
      <body style="font-family: sans-serif; line-height: 1.5">
        ${body}
      </body>
    </html>`;
}

/** The first block of the order's id: enough to tell a customer's orders apart in a subject line. */
function shortRef(orderId: string): string {
  return orderId.slice(0, 8);
}

interface Formatters {
  date(at: Date): string;
  money(amount: Amount): string;
}

function formatters({ timeZone }: RenderOptions): Formatters {
  const dates = new Intl.DateTimeFormat('en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone,
    timeZoneName: 'short',
  });
  return {
    date: (at) => dates.format(at),
    // Every currency the service takes has two decimals (lib/currencies.ts).
    money: ({ cents, currency }) =>
      new Intl.NumberFormat('en-GB', { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100),
  };
}
