-- Each order event a customer hears about by email (CUSTOMER_EMAIL_EVENTS in
-- activities/customer-emails.ts) of an order with an address becomes a `customer_email` job in the
-- transaction that writes the event, as webhooks/ does for its fan-out. The function body is a U&
-- string with \003B for each semicolon: Prisma's offline adapter splits a script at every semicolon.
CREATE FUNCTION "order_events_enqueue_customer_email"() RETURNS trigger
LANGUAGE plpgsql AS U&'
BEGIN
  IF NEW.type IN (''order.placed'', ''order.payment_reminder'', ''order.paid'', ''order.cancelled'', ''order.refunded'')
     AND EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND email IS NOT NULL) THEN
    PERFORM graphile_worker.add_job(''customer_email'', json_build_object(''eventId'', NEW.id))\003B
  END IF\003B
  RETURN NULL\003B
END';

CREATE TRIGGER "order_events_customer_email" AFTER INSERT ON "order_events"
FOR EACH ROW EXECUTE FUNCTION "order_events_enqueue_customer_email"();
