import type { Client } from '@temporalio/client';
import { isGrpcServiceError } from '@temporalio/client';
import { ORDER_PRIORITY } from '../domain/messages.js';
import type { Logger } from '../lib/logger.js';

/** gRPC codes of a server that cannot change a running workflow's priority (before 1.30; the time-skipping server). */
const UNSUPPORTED = new Set([3 /* INVALID_ARGUMENT */, 12 /* UNIMPLEMENTED */]);
/** After such an answer, how long the API leaves priorities alone before it asks again. */
const ASK_AGAIN_AFTER_MS = 5 * 60_000;

/**
 * Checkout goes first. Expiries that fall due together (a storm) become a backlog of workflow
 * tasks; a new order's placement waits behind them unless its workflow outranks them. So a new
 * order starts at ORDER_PRIORITY.checkout, and once it is placed the API lowers it to
 * ORDER_PRIORITY.placed: every order was new once, and its later work must not outrank the next
 * customer's checkout. Lowering is best effort (an order left high only goes first); a server that
 * cannot change a priority is logged once and left alone for a while.
 */
export class CheckoutPriority {
  /** The priority a new order's workflow starts with. */
  readonly atStart = { priorityKey: ORDER_PRIORITY.checkout };
  private unsupportedUntil = 0;

  constructor(
    private readonly temporal: Client,
    private readonly logger: Logger,
  ) {}

  /** Lowers a placed order's workflow to the priority of all other work. Never throws. */
  async lower(workflowId: string): Promise<void> {
    if (Date.now() < this.unsupportedUntil) return;
    try {
      await this.temporal.workflowService.updateWorkflowExecutionOptions({
        namespace: this.temporal.options.namespace,
        workflowExecution: { workflowId },
        workflowExecutionOptions: { priority: { priorityKey: ORDER_PRIORITY.placed } },
        updateMask: { paths: ['priority'] },
      });
    } catch (err) {
      if (isGrpcServiceError(err) && UNSUPPORTED.has(err.code)) {
        this.unsupportedUntil = Date.now() + ASK_AGAIN_AFTER_MS;
        this.logger.warn(
          { error: err.details },
          `Temporal cannot change a running workflow's priority (Server 1.30+ can): checkout is not prioritised; asking again in ${ASK_AGAIN_AFTER_MS / 60_000} minutes`,
        );
        return;
      }
      this.logger.warn(
        { workflowId, error: String(err) },
        "could not lower a placed order's priority: it keeps checkout priority",
      );
    }
  }
}
