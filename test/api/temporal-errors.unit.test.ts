import { ApplicationFailure, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.js';
import { callTemporal } from '../../api/temporal-errors.js';

const failing = (err: Error) => () => Promise.reject(err);
const outOfStock = ApplicationFailure.create({ type: 'OUT_OF_STOCK', nonRetryable: true, details: [{ sku: 'TEA' }] });
const gone = new WorkflowNotFoundError('workflow execution already completed', 'order-1', undefined);

async function errorOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail('resolved'),
    (err: unknown) => err,
  );
}

describe('callTemporal', () => {
  it('resolves with what the call resolves with', async () => {
    expect(await callTemporal(() => Promise.resolve({ expiresAt: 'x' }))).toEqual({ expiresAt: 'x' });
  });

  it("answers a business failure anywhere in the cause chain as its code, with the failure's details", async () => {
    const err = await errorOf(
      callTemporal(failing(new WorkflowUpdateFailedError('Workflow Update failed', outOfStock)), {
        details: { step: 'unused' },
      }),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'OUT_OF_STOCK', status: 409, details: { sku: 'TEA' } });
  });

  it("uses the endpoint's details when the failure carries none", async () => {
    const notFailed = ApplicationFailure.nonRetryable('the loyalty step is DONE, not FAILED', 'STEP_NOT_FAILED');
    const err = await errorOf(
      callTemporal(failing(new WorkflowUpdateFailedError('Workflow Update failed', notFailed)), {
        details: { step: 'loyalty' },
      }),
    );
    expect(err).toMatchObject({ code: 'STEP_NOT_FAILED', status: 409, details: { step: 'loyalty' } });
  });

  it("answers a workflow that has ended as the endpoint's code for that", async () => {
    const err = await errorOf(callTemporal(failing(gone), { whenGone: 'ORDER_NOT_UNPAID' }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'ORDER_NOT_UNPAID', status: 409 });
  });

  it('passes anything else on as it is (the API answers it 500 INTERNAL)', async () => {
    const notOurs = ApplicationFailure.nonRetryable('boom', 'SOMETHING_ELSE');
    expect(await errorOf(callTemporal(failing(notOurs), { whenGone: 'ORDER_NOT_UNPAID' }))).toBe(notOurs);
    expect(await errorOf(callTemporal(failing(gone)))).toBe(gone); // no code for a gone workflow here
    const unreachable = new Error('14 UNAVAILABLE: connection refused');
    expect(await errorOf(callTemporal(failing(unreachable)))).toBe(unreachable);
  });
});
