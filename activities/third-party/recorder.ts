import type { Db } from '../../lib/db.js';

export type ThirdPartyService = 'payments' | 'invoice' | 'notification' | 'loyalty';

/**
 * Durable memory of the local fakes. Like the real services they stand in for, a fake acts once
 * per idempotency key (fake_effects) and logs every call, repeated or not (fake_calls), so tests
 * can count both what we asked for and what actually happened.
 */
export class FakeRecorder {
  constructor(private readonly db: Db) {}

  /** Returns true when this call had the effect, false when the key had already been used. */
  async record(service: ThirdPartyService, operation: string, idempotencyKey: string, payload: object): Promise<boolean> {
    const inserted = await this.db.$executeRaw`
      INSERT INTO fake_effects (service, operation, idempotency_key, payload)
      VALUES (${service}, ${operation}, ${idempotencyKey}, ${JSON.stringify(payload)}::jsonb)
      ON CONFLICT DO NOTHING`;
    await this.db.fakeCall.create({
      data: { service, operation, idempotencyKey, outcome: inserted === 1 ? 'EFFECT' : 'REPEAT' },
    });
    return inserted === 1;
  }
}
