import { describe, expect, it } from 'vitest';
import type { CustomerEmail } from '../../../adapters/ports/mailer.js';
import { html } from '../../../adapters/smtp/html.js';
import { renderCustomerEmail } from '../../../adapters/smtp/templates.js';

const base = { eventId: 'e1', orderId: '0badc0de-0000-4000-8000-000000000000', to: 'a@customers.example' };
const total = { cents: 123456, currency: 'eur' };
const deadline = new Date('2026-12-07T10:30:00Z');

describe('the html tag', () => {
  it('escapes every value, and only values', () => {
    const value = `<script>alert("x")</script> & 'quotes'`;
    expect(html`<p title="${value}">${value}</p>`.markup).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">' +
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</p>',
    );
  });

  it('keeps HTML built by the tag as it is, alone or in a list', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${[inner, inner]}</p>`.markup).toBe(
      '<p><b>&lt;i&gt;</b><b>&lt;i&gt;</b><b>&lt;i&gt;</b></p>',
    );
  });
});

describe('the five emails', () => {
  const emails: CustomerEmail[] = [
    { ...base, kind: 'placed', total, expiresAt: deadline },
    { ...base, kind: 'payment_reminder', total, expiresAt: deadline },
    { ...base, kind: 'paid', total },
    { ...base, kind: 'cancelled', reason: 'PAYMENT_TIMEOUT' },
    { ...base, kind: 'refunded', amount: { cents: 500, currency: 'chf' }, reason: 'AMOUNT_MISMATCH' },
  ];

  it.each(emails)('$kind: the text and the HTML part say the same words', (email) => {
    const rendered = renderCustomerEmail(email, { timeZone: 'Europe/Berlin' });
    const htmlAsText = rendered.html
      .replace(/<title>.*<\/title>/s, '')
      .replace(/<\/?strong>/g, '')
      .replace(/<[^>]+>/g, ' ')
      .replaceAll('&#39;', "'")
      .replace(/\s+/g, ' ')
      .trim();
    expect(htmlAsText).toBe(rendered.text.replace(/\s+/g, ' ').trim());
    expect(rendered.text).toContain(base.orderId);
  });

  it('writes the deadline in the configured time zone, and money in its currency', () => {
    const placed = renderCustomerEmail(emails[0]!, { timeZone: 'Europe/Berlin' });
    expect(placed.subject).toBe('Your order 0badc0de: please pay by Monday, 7 December 2026 at 11:30 CET');
    expect(placed.text).toContain('Total: €1,234.56');
    const refunded = renderCustomerEmail(emails[4]!, { timeZone: 'UTC' });
    // Intl puts a no-break space between the code and the amount.
    expect(refunded.text).toMatch(
      /We have refunded CHF\s5\.00 for order 0badc0de-0000-4000-8000-000000000000: the payment did not match the order's total\./,
    );
  });

  it('a cancel or refund whose reason is unknown says so without inventing one', () => {
    const cancelled = renderCustomerEmail({ ...base, kind: 'cancelled', reason: null }, { timeZone: 'UTC' });
    expect(cancelled.text).toContain(`Your order ${base.orderId} has been cancelled.`);
  });
});
