import { describe, expect, it } from 'vitest';
import { SIGNED_BODY_ACCESS, type Endpoint } from '../../api/endpoint.js';
import { CALLBACK_ENDPOINTS, DEV_ENDPOINTS, ENDPOINTS, STRIPE_ENDPOINTS } from '../../api/endpoints.js';
import { ERRORS } from '../../api/errors.js';
import { FAULT_ENDPOINTS } from '../../dev/fakes/fault-endpoints.js';
import { codeIn, readDoc, tableRows } from '../helpers/markdown.js';

const page = readDoc('api.md');
const endpoints = new Map<string, Endpoint<never>>(
  [...ENDPOINTS, ...CALLBACK_ENDPOINTS, ...STRIPE_ENDPOINTS, ...DEV_ENDPOINTS, ...FAULT_ENDPOINTS].map((e) => [
    `${e.method.toUpperCase()} ${e.path}`,
    e,
  ]),
);

describe('docs/api.md says what the code does', () => {
  it('lists every route, and only those, among the endpoints', () => {
    const listed = tableRows(page, '| endpoint | what it does |').map(([endpoint]) => codeIn(endpoint!));
    expect(listed.sort()).toEqual([...endpoints.keys()].sort());
  });

  it('says who may call each route as its entry in api/endpoint-table.ts does', () => {
    const rows = tableRows(page, '| endpoint | anonymous | customer | operator | payment provider | Prometheus |');
    expect(rows.map(([endpoint]) => codeIn(endpoint!)).sort()).toEqual([...endpoints.keys()].sort());
    for (const [route, anonymous, customer, , provider, prometheus] of rows) {
      const endpoint = endpoints.get(codeIn(route!)!)!;
      const who = {
        anonymous: anonymous!.startsWith('yes'),
        customerRefused: customer!.startsWith('401'),
        rateLimited: customer!.includes('rate-limited'),
        provider: provider!.startsWith('yes'),
        scraper: prometheus!.startsWith('yes'),
        devOnly: route!.includes('(dev only)'),
      };
      expect(who, route).toEqual({
        anonymous: endpoint.access === 'public',
        customerRefused: endpoint.access === 'operator' || endpoint.access === 'scraper',
        rateLimited: endpoint.rateLimit !== undefined,
        provider: SIGNED_BODY_ACCESS.includes(endpoint.access),
        scraper: endpoint.access === 'scraper',
        devOnly: endpoint.devOnly === true,
      });
    }
  });

  it('lists every error code with its status, as api/errors.ts defines them', () => {
    const listed = Object.fromEntries(
      tableRows(page, '| code | status |').map(([code, status]) => [codeIn(code!), Number(status)]),
    );
    expect(listed).toEqual(Object.fromEntries(Object.entries(ERRORS).map(([code, { status }]) => [code, status])));
  });
});
