-- Create index "appointment_hold_id" to table: "appointments"

CREATE INDEX `appointment_hold_id` ON `appointments` (`hold_id`);

-- Create index "delivery_notification_id" to table: "deliveries"

CREATE INDEX `delivery_notification_id` ON `deliveries` (`notification_id`);

-- Create index "webhookdelivery_notification_id" to table: "webhook_deliveries"

CREATE INDEX `webhookdelivery_notification_id` ON `webhook_deliveries` (`notification_id`);
