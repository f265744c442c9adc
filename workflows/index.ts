// The worker's workflowsPath: every workflow type this service registers.
export { OrderLifecycle } from './order-lifecycle.js';
export { SettleLatePayment } from './late-payment.js';
export { SettleFailedRefund } from './failed-refund.js';
export { ReconcileStrandedOrders } from './reconciliation.js';
export { SweepProviderEvents } from './provider-sweep.js';
