import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes.js';
import { StartupError } from '../startup-error.js';

/**
 * The namespace and the order search attributes on a Temporal server, registered unless they are
 * already there: Temporal Server registers nothing by itself, and a restarted one has them in its store.
 */
const { IndexedValueType } = proto.temporal.api.enums.v1;
const ALREADY_EXISTS = 6; // gRPC status code
/** Closed workflows stay listable in the Web UI this long. */
const RETENTION = msToTs('7 days');
/**
 * Each service caches namespaces and refreshes them on this interval (the server's default for
 * `system.namespaceCacheRefreshInterval`); the search attributes of a SQL store live in the namespace.
 */
const NAMESPACE_CACHE_REFRESH_MS = 2_000;

/** The order search attributes as the operator API names their types. */
export function searchAttributeTypes(): Record<string, proto.temporal.api.enums.v1.IndexedValueType> {
  return Object.fromEntries(SEARCH_ATTRIBUTES.map((k) => [k.name, IndexedValueType[`INDEXED_VALUE_TYPE_${k.type}`]]));
}

/** What one start registered: nothing when the store already had the namespace and every attribute. */
export interface Registered {
  namespace: boolean;
  searchAttributes: string[];
}

/**
 * Registers what is missing, once the frontend answers, and returns when the namespace and the
 * attributes can be used, with what it registered. Gives up when `failed` settles (the server
 * process ended) or after `timeoutMs`.
 */
export async function ensureNamespace(
  address: string,
  namespace: string,
  failed: Promise<string>,
  timeoutMs = 60_000,
): Promise<Registered> {
  let failure: string | undefined;
  void failed.then((how) => (failure = how));
  const deadline = Date.now() + timeoutMs;
  // Kept across the attempts: one may register and then fail on a cache the next one finds filled.
  const registered: Registered = { namespace: false, searchAttributes: [] };
  let lastError = 'no answer';
  for (;;) {
    if (failure !== undefined) throw new StartupError(`Temporal Server stopped during start-up (${failure})`);
    if (Date.now() > deadline)
      throw new StartupError(`Temporal Server at ${address} not ready after ${timeoutMs / 1000} s (${lastError})`);
    try {
      await withConnection(address, (connection) => register(connection, namespace, registered));
      return registered;
    } catch (err) {
      lastError = (err as Error).message.split('\n')[0]!;
      await sleep(250);
    }
  }
}

async function register(connection: Connection, namespace: string, registered: Registered): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: RETENTION });
    registered.namespace = true;
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === ALREADY_EXISTS)) throw err;
  }
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.entries(searchAttributeTypes()).filter(([name]) => !(name in (customAttributes ?? {})));
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing) });
    registered.searchAttributes.push(...missing.map(([name]) => name));
  }
  // The frontend's cache has them once a query naming every attribute is accepted ...
  const query = SEARCH_ATTRIBUTES.map((k) => `${k.name} IS NULL`).join(' AND ');
  await connection.workflowService.countWorkflowExecutions({ namespace, query });
  // ... and the other services', refreshed on the same interval, one interval later at most.
  if (registered.namespace || registered.searchAttributes.length > 0) await sleep(NAMESPACE_CACHE_REFRESH_MS);
}

/** One line naming the server when TEMPORAL_ADDRESS cannot be used. */
export async function assertTemporalReachable(address: string, namespace: string): Promise<void> {
  try {
    await withConnection(address, (connection) => connection.workflowService.describeNamespace({ namespace }));
  } catch (err) {
    throw new StartupError(
      `TEMPORAL_ADDRESS: cannot use namespace "${namespace}" at ${address} (${(err as Error).message.split('\n')[0]})`,
    );
  }
}

async function withConnection<T>(address: string, use: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address, connectTimeout: '2s' });
  try {
    return await use(connection);
  } finally {
    await connection.close();
  }
}
