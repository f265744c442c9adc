import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { PayloadEncryptionCodec, type PayloadKeys } from '../../lib/payload-encryption.js';
import { historyBytes } from '../cost/history-bytes.js';

const { EventType } = proto.temporal.api.enums.v1;
const { HistoryEvent } = proto.temporal.api.history.v1;
type Event = proto.temporal.api.history.v1.IHistoryEvent;
const KEYS: PayloadKeys = [{ id: 'k1', key: Buffer.alloc(32, 'k') }];

describe('where the history bytes go', () => {
  it("splits each event into our values, the codec's overhead, search attributes, the SDK's marker data and framing", async () => {
    const value = { orderId: 'o-1', status: 'CANCELLED' };
    const [sealed] = await new PayloadEncryptionCodec(KEYS).encode([defaultPayloadConverter.toPayload(value)]);
    const markerData = defaultPayloadConverter.toPayload({ seq: 1 });
    const attribute = defaultPayloadConverter.toPayload('CANCELLED');
    const events: Event[] = [
      {
        eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
        markerRecordedEventAttributes: {
          markerName: 'core_local_activity',
          details: { result: { payloads: [sealed!] }, data: { payloads: [markerData] } },
        },
      },
      {
        eventType: EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
        upsertWorkflowSearchAttributesEventAttributes: {
          searchAttributes: { indexedFields: { OrderStatus: attribute } },
        },
      },
    ];
    const [marker, upsert] = await historyBytes({ events }, KEYS);
    const size = (p: object) => proto.temporal.api.common.v1.Payload.encode(p).finish().length;
    const json = JSON.stringify(value).length;
    expect(marker).toMatchObject({
      type: 'MARKER_RECORDED',
      data: json,
      codec: size(sealed!) - json,
      sdkMarker: size(markerData),
    });
    expect(upsert).toMatchObject({ data: 0, codec: 0, searchAttributes: size(attribute) });
    for (const [row, event] of [
      [marker!, events[0]!],
      [upsert!, events[1]!],
    ] as const) {
      expect(row.bytes).toBe(HistoryEvent.encode(HistoryEvent.fromObject(event)).finish().length);
      expect(row.data + row.codec + row.searchAttributes + row.sdkMarker + row.framing).toBe(row.bytes);
      expect(row.framing).toBeGreaterThan(0);
    }
  });
});
