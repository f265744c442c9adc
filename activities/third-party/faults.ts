import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../../lib/db.js';
import { THIRD_PARTY_FAILURES } from '../../domain/errors.js';

export const FAKE_SERVICES = ['payments', 'invoice', 'notification', 'loyalty'] as const;
export type FakeService = (typeof FAKE_SERVICES)[number];

export interface FaultSpec {
  failNext?: number | undefined;
  failAlways?: boolean | undefined;
  latencyMs?: number | undefined;
}

/**
 * Injected failures for the local fakes, kept in the database so the API (which sets them) and the
 * worker (whose fakes obey them) agree, whichever processes they run in.
 */
export class FakeFaults {
  constructor(private readonly db: Db) {}

  async set(service: FakeService, spec: FaultSpec) {
    const data = {
      ...(spec.failNext === undefined ? {} : { failNext: spec.failNext }),
      ...(spec.failAlways === undefined ? {} : { failAlways: spec.failAlways }),
      ...(spec.latencyMs === undefined ? {} : { latencyMs: spec.latencyMs }),
    };
    const row = await this.db.fakeFault.upsert({ where: { service }, create: { service, ...data }, update: data });
    return { service, failNext: row.failNext, failAlways: row.failAlways, latencyMs: row.latencyMs };
  }

  async clear(service: FakeService): Promise<void> {
    await this.db.fakeFault.deleteMany({ where: { service } });
  }

  /** Waits the injected latency, then throws if this call is meant to fail. */
  async apply(service: FakeService): Promise<void> {
    const fault = await this.db.fakeFault.findUnique({ where: { service } });
    if (!fault) return;
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.failAlways) {
      throw ApplicationFailure.nonRetryable(`${service} rejected the call (injected failAlways)`, THIRD_PARTY_FAILURES.rejected);
    }
    // Decrement-if-positive in one statement: concurrent calls consume exactly N failures.
    const consumed = await this.db.$executeRaw`
      UPDATE fake_faults SET fail_next = fail_next - 1 WHERE service = ${service} AND fail_next > 0`;
    if (consumed === 1) {
      throw ApplicationFailure.retryable(`${service} is unavailable (injected failNext)`, THIRD_PARTY_FAILURES.unavailable);
    }
  }
}
