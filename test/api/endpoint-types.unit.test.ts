import { describe, expect, it } from 'vitest';
import { handled, type HandlerOf } from '../../api/endpoint.js';
import { ENDPOINT_TABLE } from '../../api/endpoint-table.js';

// What the compiler holds a handler to comes from its entry alone: `npm run typecheck` fails if one
// of these stops being an error (each `@ts-expect-error` then has nothing to expect).
type ForceCancel = HandlerOf<typeof ENDPOINT_TABLE.forceCancel, object>;

// @ts-expect-error the entry's success schema is ForceCancelled: another body is refused
export const wrongBody: ForceCancel = async ({ params: { id } }) => ({ id });

// @ts-expect-error the entry declares no body, so its handler has none to read
export const readsUndeclaredBody: ForceCancel = async ({ body }) => ({ orderId: body, status: 'CANCELLED' });

// @ts-expect-error an operator's endpoint: its caller is the operator, never a customer
export const customerOnly: ForceCancel = async ({ caller }) => ({ orderId: caller.customerId, status: 'CANCELLED' });

describe('an endpoint with its handler', () => {
  it('is its entry as the table declares it, with that handler', () => {
    const handler: ForceCancel = async ({ params: { id } }) => ({ orderId: id, status: 'CANCELLED' });
    const endpoint = handled(ENDPOINT_TABLE.forceCancel, handler);
    expect(endpoint).toEqual({ ...ENDPOINT_TABLE.forceCancel, handler });
  });
});
