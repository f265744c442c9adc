import proto from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { PayloadEncryptionCodec, type PayloadKeys } from '../../lib/payload-encryption.js';

type History = proto.temporal.api.history.v1.IHistory;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;
const { HistoryEvent: EventMessage } = proto.temporal.api.history.v1;
const { Payload: PayloadMessage } = proto.temporal.api.common.v1;
const { EventType } = proto.temporal.api.enums.v1;

/**
 * Where an event's protobuf bytes go. `data`: the service's own values (the JSON the codec sealed);
 * `codec`: what sealing them added (the encoding's metadata, key id, iv, tag, framing); `searchAttributes`:
 * Temporal's indexed values, in clear; `sdkMarker`: the data the SDK records beside a local activity's
 * result; `framing`: everything else, Temporal's own (ids, times, task queue, identity, checksums).
 */
export interface EventBytes {
  eventId: number;
  type: string;
  bytes: number;
  data: number;
  codec: number;
  searchAttributes: number;
  sdkMarker: number;
  framing: number;
}

export async function historyBytes(history: History, keys: PayloadKeys): Promise<EventBytes[]> {
  const codec = new PayloadEncryptionCodec(keys);
  return Promise.all(
    (history.events ?? []).map(async (event) => {
      const bytes = EventMessage.encode(EventMessage.fromObject(event)).finish().length;
      const row: EventBytes = {
        eventId: Number(event.eventId),
        type: String(EventType[event.eventType as number] ?? event.eventType).replace(/^EVENT_TYPE_/, ''),
        bytes,
        data: 0,
        codec: 0,
        searchAttributes: 0,
        sdkMarker: 0,
        framing: bytes,
      };
      for (const { payload, kind } of payloadsOf(event)) {
        const size = PayloadMessage.encode(payload).finish().length;
        row.framing -= size;
        if (kind === 'searchAttribute') row.searchAttributes += size;
        else if (kind === 'sdkMarker') row.sdkMarker += size;
        else {
          const [opened] = await codec.decode([payload]);
          const data = opened?.data?.length ?? 0;
          row.data += data;
          row.codec += size - data;
        }
      }
      return row;
    }),
  );
}

/** Every payload an event carries, found by shape (metadata and data), with what it is. */
function payloadsOf(event: HistoryEvent): Array<{ payload: Payload; kind: 'searchAttribute' | 'sdkMarker' | 'value' }> {
  const found: Array<{ payload: Payload; kind: 'searchAttribute' | 'sdkMarker' | 'value' }> = [];
  const visit = (node: unknown, path: string[]): void => {
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    const record = node as Record<string, unknown>;
    if ('metadata' in record && 'data' in record && !Array.isArray(record.metadata)) {
      const kind = path.includes('indexedFields')
        ? 'searchAttribute'
        : path.includes('markerRecordedEventAttributes') && path.at(-3) === 'data'
          ? 'sdkMarker'
          : 'value';
      found.push({ payload: record, kind });
      return;
    }
    for (const [key, value] of Object.entries(record)) visit(value, [...path, key]);
  };
  visit(EventMessage.toObject(EventMessage.fromObject(event), { defaults: false }), []);
  return found;
}
