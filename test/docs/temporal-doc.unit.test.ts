import { readFileSync } from 'node:fs';
import { TypedSearchAttributes } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import * as messages from '../../domain/messages.js';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';
import { codeIn, readDoc, tableRows } from '../helpers/markdown.js';

const page = readDoc('temporal.md');

/** The workflow types the worker registers: the exports of workflows/index.ts (read as text: workflow code only loads inside a workflow). */
function registeredWorkflowTypes(): string[] {
  const index = readFileSync(new URL('../../workflows/index.ts', import.meta.url), 'utf8');
  return [...index.matchAll(/^export \{ (\w+) \}/gm)].map((m) => m[1]!);
}

/** Every signal, update and query domain/messages.ts defines, as `kind name`. */
function definedMessages(): string[] {
  return (Object.values(messages) as unknown[])
    .filter(
      (value): value is { type: string; name: string } =>
        typeof value === 'object' && value !== null && 'type' in value && 'name' in value,
    )
    .map(({ type, name }) => `${type} ${name}`);
}

describe('docs/temporal.md names what the code defines', () => {
  it('lists the workflow types the worker registers, with their ids', () => {
    const rows = tableRows(page, '| workflow type | id |');
    expect(rows.map(([type]) => codeIn(type!)).sort()).toEqual(registeredWorkflowTypes().sort());
    expect(registeredWorkflowTypes().sort()).toEqual(
      [
        messages.ORDER_WORKFLOW_TYPE,
        messages.LATE_PAYMENT_WORKFLOW_TYPE,
        messages.FAILED_REFUND_WORKFLOW_TYPE,
        messages.RECONCILIATION_WORKFLOW_TYPE,
        messages.PROVIDER_SWEEP_WORKFLOW_TYPE,
      ].sort(),
    );
    const idOf = Object.fromEntries(rows.map(([type, id]) => [codeIn(type!), id!]));
    expect(idOf[messages.ORDER_WORKFLOW_TYPE]).toContain(`\`${messages.orderWorkflowId('<orderId>')}\``);
    expect(idOf[messages.LATE_PAYMENT_WORKFLOW_TYPE]).toContain(`\`${messages.latePaymentWorkflowId('<paymentId>')}\``);
    expect(idOf[messages.FAILED_REFUND_WORKFLOW_TYPE]).toContain(
      `\`${messages.failedRefundWorkflowId('<paymentId>')}\``,
    );
    expect(idOf[messages.RECONCILIATION_WORKFLOW_TYPE]).toContain(`\`${messages.RECONCILIATION_SCHEDULE_ID}\``);
    expect(idOf[messages.PROVIDER_SWEEP_WORKFLOW_TYPE]).toContain(`\`${messages.PROVIDER_SWEEP_SCHEDULE_ID}\``);
  });

  it('lists every signal, update and query, and only those', () => {
    const listed = tableRows(page, '| kind | name |').map(([kind, name]) => `${kind} ${codeIn(name!)}`);
    expect(definedMessages().length).toBeGreaterThan(0);
    expect(listed.sort()).toEqual(definedMessages().sort());
  });

  it('lists every search attribute with its type', () => {
    const listed = tableRows(page, '| search attribute | type |').map(([name, type]) => `${codeIn(name!)}=${type}`);
    expect(listed.sort()).toEqual(
      SEARCH_ATTRIBUTES.map((key) => `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`).sort(),
    );
  });
});
