-- An endpoint may be the shop's invoicing or loyalty system: its fulfilment step delivers the order's
-- order.paid to it (webhooks/fulfillment-services.ts), so the general fan-out leaves order.paid out for
-- such an endpoint. The API accepts only INVOICE and LOYALTY here.
ALTER TABLE "webhook_endpoints" ADD COLUMN     "fulfillment_step" "FulfillmentStep";

-- The trigger queues a fan-out only when some endpoint will get a delivery of the event, with the rule
-- of fanOut (store/webhook-deliveries.ts). The body is a U& string with \003B for each semicolon, as in
-- the migration that made it.
CREATE OR REPLACE FUNCTION "order_events_enqueue_webhooks"() RETURNS trigger
LANGUAGE plpgsql AS U&'
BEGIN
  IF EXISTS (SELECT 1 FROM webhook_endpoints
              WHERE enabled AND NEW.type = ANY(event_types)
                AND NOT (NEW.type = ''order.paid'' AND fulfillment_step IS NOT NULL)) THEN
    PERFORM graphile_worker.add_job(''webhook_fan_out'', json_build_object(''eventId'', NEW.id))\003B
  END IF\003B
  RETURN NULL\003B
END';
