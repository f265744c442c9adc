import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { orderIdOfWorkflow, orderWorkflowId } from '../domain/messages.js';
import type { Logger } from '../lib/logger.js';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK's logger interface over pino: the worker's runtime, Core (forwarded), workflow
 * and activity logs become JSON lines of the same stream. The SDK adds workflowId to workflow and
 * activity lines; an order workflow's line also gets its orderId, so both are always there.
 */
export function temporalLogger(logger: Logger): TemporalLogger {
  const log = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const fields: Record<string, unknown> = { ...meta };
    const orderId = typeof meta.workflowId === 'string' ? orderIdOfWorkflow(meta.workflowId) : undefined;
    if (orderId !== undefined && fields.orderId === undefined) fields.orderId = orderId;
    if (typeof meta.orderId === 'string' && fields.workflowId === undefined)
      fields.workflowId = orderWorkflowId(meta.orderId);
    logger[LEVELS[level]](fields, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
