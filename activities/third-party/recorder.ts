import type { Db } from '../../lib/db.js';
import type { FakeFaults, FakeService } from './faults.js';

/**
 * Durable memory of the local fakes. Like the real services they stand in for, a fake acts once
 * per idempotency key (fake_effects: one row per key, a single atomic insert) and logs every call,
 * repeated or failed (fake_calls), so tests can count both what we asked for and what happened.
 */
export class FakeRecorder {
  constructor(
    private readonly db: Db,
    private readonly faults: FakeFaults,
  ) {}

  /** Returns true when this call had the effect, false when the key had already been used. */
  async record(service: FakeService, operation: string, idempotencyKey: string, payload: object): Promise<boolean> {
    try {
      await this.faults.apply(service);
    } catch (err) {
      await this.log(service, operation, idempotencyKey, 'FAILED');
      throw err;
    }
    const inserted = await this.db.$executeRaw`
      INSERT INTO fake_effects (service, operation, idempotency_key, payload)
      VALUES (${service}, ${operation}, ${idempotencyKey}, ${JSON.stringify(payload)}::jsonb)
      ON CONFLICT DO NOTHING`;
    await this.log(service, operation, idempotencyKey, inserted === 1 ? 'EFFECT' : 'REPEAT');
    return inserted === 1;
  }

  private async log(service: FakeService, operation: string, idempotencyKey: string, outcome: 'EFFECT' | 'REPEAT' | 'FAILED') {
    await this.db.fakeCall.create({ data: { service, operation, idempotencyKey, outcome } });
  }
}
