-- Create "api_keys" table

CREATE TABLE `api_keys` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `prefix` text NOT NULL, `secret_hash` text NOT NULL, `scopes` json NOT NULL, `last_used_at` datetime NULL, `revoked_at` datetime NULL, `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `api_keys_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "apikey_account_id" to table: "api_keys"

CREATE INDEX `apikey_account_id` ON `api_keys` (`account_id`);

-- Create index "apikey_secret_hash" to table: "api_keys"

CREATE UNIQUE INDEX `apikey_secret_hash` ON `api_keys` (`secret_hash`);

-- Create "accounts" table

CREATE TABLE `accounts` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `config_version` integer NOT NULL DEFAULT (0), PRIMARY KEY (`id`));

-- Create "appointments" table

CREATE TABLE `appointments` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `client_name` text NOT NULL, `client_phone` text NOT NULL, `client_email` text NULL, `external_reference` text NULL, `status` text NOT NULL DEFAULT ('confirmed'), `starts_at` datetime NOT NULL, `ends_at` datetime NOT NULL, `source` text NOT NULL DEFAULT ('api'), `cancelled_at` datetime NULL, `cancellation_reason` text NULL, `reminded_at` datetime NULL, `version` integer NOT NULL DEFAULT (1), `account_id` text NOT NULL, `unit_id` text NOT NULL, `service_id` text NOT NULL, `barber_id` text NOT NULL, `customer_id` text NOT NULL, `api_key_id` text NOT NULL, `hold_id` text NULL, PRIMARY KEY (`id`), CONSTRAINT `appointments_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_units_unit` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_services_service` FOREIGN KEY (`service_id`) REFERENCES `services` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_barbers_barber` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_customers_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `appointments_holds_hold` FOREIGN KEY (`hold_id`) REFERENCES `holds` (`id`) ON DELETE SET NULL);

-- Create index "appointment_account_id" to table: "appointments"

CREATE INDEX `appointment_account_id` ON `appointments` (`account_id`);

-- Create index "appointment_api_key_id_external_reference" to table: "appointments"

CREATE UNIQUE INDEX `appointment_api_key_id_external_reference` ON `appointments` (`api_key_id`, `external_reference`);

-- Create index "appointment_barber_id_starts_at" to table: "appointments"

CREATE INDEX `appointment_barber_id_starts_at` ON `appointments` (`barber_id`, `starts_at`);

-- Create index "appointment_account_id_starts_at" to table: "appointments"

CREATE INDEX `appointment_account_id_starts_at` ON `appointments` (`account_id`, `starts_at`);

-- Create index "appointment_account_id_client_phone_starts_at" to table: "appointments"

CREATE INDEX `appointment_account_id_client_phone_starts_at` ON `appointments` (`account_id`, `client_phone`, `starts_at`);

-- Create index "appointment_status_starts_at" to table: "appointments"

CREATE INDEX `appointment_status_starts_at` ON `appointments` (`status`, `starts_at`);

-- Create "barbers" table

CREATE TABLE `barbers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `active` bool NOT NULL DEFAULT (true), `bookings_version` integer NOT NULL DEFAULT (0), `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `barbers_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "barber_account_id" to table: "barbers"

CREATE INDEX `barber_account_id` ON `barbers` (`account_id`);

-- Create "customers" table

CREATE TABLE `customers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `phone` text NOT NULL, `email` text NULL, `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `customers_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "customer_account_id" to table: "customers"

CREATE INDEX `customer_account_id` ON `customers` (`account_id`);

-- Create index "customer_account_id_phone" to table: "customers"

CREATE UNIQUE INDEX `customer_account_id_phone` ON `customers` (`account_id`, `phone`);

-- Create "deliveries" table

CREATE TABLE `deliveries` (`id` text NOT NULL, `delivered_at` datetime NULL, `account_id` text NOT NULL, `api_key_id` text NOT NULL, `notification_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `deliveries_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `deliveries_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `deliveries_notifications_notification` FOREIGN KEY (`notification_id`) REFERENCES `notifications` (`id`) ON DELETE NO ACTION);

-- Create index "delivery_account_id" to table: "deliveries"

CREATE INDEX `delivery_account_id` ON `deliveries` (`account_id`);

-- Create index "delivery_api_key_id_notification_id" to table: "deliveries"

CREATE UNIQUE INDEX `delivery_api_key_id_notification_id` ON `deliveries` (`api_key_id`, `notification_id`);

-- Create index "delivery_pending" to table: "deliveries"

CREATE INDEX `delivery_pending` ON `deliveries` (`api_key_id`, `notification_id`) WHERE delivered_at IS NULL;

-- Create "holds" table

CREATE TABLE `holds` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `starts_at` datetime NOT NULL, `ends_at` datetime NOT NULL, `status` text NOT NULL DEFAULT ('active'), `expires_at` datetime NOT NULL, `account_id` text NOT NULL, `unit_id` text NOT NULL, `service_id` text NOT NULL, `barber_id` text NOT NULL, `api_key_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `holds_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `holds_units_unit` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE NO ACTION, CONSTRAINT `holds_services_service` FOREIGN KEY (`service_id`) REFERENCES `services` (`id`) ON DELETE NO ACTION, CONSTRAINT `holds_barbers_barber` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE NO ACTION, CONSTRAINT `holds_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);

-- Create index "hold_account_id" to table: "holds"

CREATE INDEX `hold_account_id` ON `holds` (`account_id`);

-- Create index "hold_status_expires_at" to table: "holds"

CREATE INDEX `hold_status_expires_at` ON `holds` (`status`, `expires_at`);

-- Create index "hold_barber_id_starts_at" to table: "holds"

CREATE INDEX `hold_barber_id_starts_at` ON `holds` (`barber_id`, `starts_at`);

-- Create index "hold_api_key_id_status_expires_at" to table: "holds"

CREATE INDEX `hold_api_key_id_status_expires_at` ON `holds` (`api_key_id`, `status`, `expires_at`);

-- Create "notifications" table

CREATE TABLE `notifications` (`id` text NOT NULL, `type` text NOT NULL, `source` text NOT NULL, `appointment` json NOT NULL, `previous_starts_at` datetime NULL, `created_at` datetime NOT NULL, `account_id` text NOT NULL, `appointment_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `notifications_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_appointments_subject` FOREIGN KEY (`appointment_id`) REFERENCES `appointments` (`id`) ON DELETE NO ACTION);

-- Create index "notification_account_id" to table: "notifications"

CREATE INDEX `notification_account_id` ON `notifications` (`account_id`);

-- Create index "notification_account_id_created_at" to table: "notifications"

CREATE INDEX `notification_account_id_created_at` ON `notifications` (`account_id`, `created_at`);

-- Create "reservations" table

CREATE TABLE `reservations` (`id` text NOT NULL, `starts_at` datetime NOT NULL, `ends_at` datetime NOT NULL, `expires_at` datetime NULL, `account_id` text NOT NULL, `barber_id` text NOT NULL, `hold_id` text NULL, `appointment_id` text NULL, PRIMARY KEY (`id`), CONSTRAINT `reservations_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `reservations_barbers_barber` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE NO ACTION, CONSTRAINT `reservations_holds_hold` FOREIGN KEY (`hold_id`) REFERENCES `holds` (`id`) ON DELETE SET NULL, CONSTRAINT `reservations_appointments_appointment` FOREIGN KEY (`appointment_id`) REFERENCES `appointments` (`id`) ON DELETE SET NULL);

-- Create index "reservation_account_id" to table: "reservations"

CREATE INDEX `reservation_account_id` ON `reservations` (`account_id`);

-- Create index "reservation_barber_id_starts_at" to table: "reservations"

CREATE INDEX `reservation_barber_id_starts_at` ON `reservations` (`barber_id`, `starts_at`);

-- Create index "reservation_hold_id" to table: "reservations"

CREATE UNIQUE INDEX `reservation_hold_id` ON `reservations` (`hold_id`);

-- Create index "reservation_appointment_id" to table: "reservations"

CREATE UNIQUE INDEX `reservation_appointment_id` ON `reservations` (`appointment_id`);

-- Create "services" table

CREATE TABLE `services` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `description` text NOT NULL DEFAULT (''), `duration_minutes` integer NOT NULL, `buffer_minutes` integer NOT NULL DEFAULT (0), `price_amount` integer NOT NULL, `price_currency` text NOT NULL, `active` bool NOT NULL DEFAULT (true), `bookable_online` bool NOT NULL DEFAULT (true), `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `services_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "service_account_id" to table: "services"

CREATE INDEX `service_account_id` ON `services` (`account_id`);

-- Create "time_offs" table

CREATE TABLE `time_offs` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `starts_at` datetime NOT NULL, `ends_at` datetime NOT NULL, `reason` text NOT NULL DEFAULT (''), `barber_id` text NOT NULL, `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `time_offs_barbers_time_off` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE NO ACTION, CONSTRAINT `time_offs_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "timeoff_account_id" to table: "time_offs"

CREATE INDEX `timeoff_account_id` ON `time_offs` (`account_id`);

-- Create index "timeoff_barber_id_starts_at" to table: "time_offs"

CREATE INDEX `timeoff_barber_id_starts_at` ON `time_offs` (`barber_id`, `starts_at`);

-- Create "units" table

CREATE TABLE `units` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `timezone` text NOT NULL, `address` text NOT NULL DEFAULT (''), `phone` text NOT NULL DEFAULT (''), `active` bool NOT NULL DEFAULT (true), `slot_step_minutes` integer NOT NULL DEFAULT (15), `min_lead_minutes` integer NOT NULL DEFAULT (60), `horizon_days` integer NOT NULL DEFAULT (365), `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `units_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "unit_account_id" to table: "units"

CREATE INDEX `unit_account_id` ON `units` (`account_id`);

-- Create "webhook_attempts" table

CREATE TABLE `webhook_attempts` (`id` text NOT NULL, `attempted_at` datetime NOT NULL, `status_code` integer NULL, `latency_ms` integer NOT NULL, `error` text NOT NULL DEFAULT (''), `account_id` text NOT NULL, `delivery_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_attempts_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `webhook_attempts_webhook_deliveries_attempts` FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries` (`id`) ON DELETE CASCADE);

-- Create index "webhookattempt_account_id" to table: "webhook_attempts"

CREATE INDEX `webhookattempt_account_id` ON `webhook_attempts` (`account_id`);

-- Create index "webhookattempt_delivery_id_attempted_at" to table: "webhook_attempts"

CREATE INDEX `webhookattempt_delivery_id_attempted_at` ON `webhook_attempts` (`delivery_id`, `attempted_at`);

-- Create "webhook_deliveries" table

CREATE TABLE `webhook_deliveries` (`id` text NOT NULL, `status` text NOT NULL DEFAULT ('pending'), `attempt_count` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NOT NULL, `retry_since` datetime NULL, `created_at` datetime NOT NULL, `delivered_at` datetime NULL, `account_id` text NOT NULL, `notification_id` text NOT NULL, `endpoint_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_deliveries_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `webhook_deliveries_notifications_notification` FOREIGN KEY (`notification_id`) REFERENCES `notifications` (`id`) ON DELETE NO ACTION, CONSTRAINT `webhook_deliveries_webhook_endpoints_deliveries` FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints` (`id`) ON DELETE CASCADE);

-- Create index "webhookdelivery_account_id" to table: "webhook_deliveries"

CREATE INDEX `webhookdelivery_account_id` ON `webhook_deliveries` (`account_id`);

-- Create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"

CREATE INDEX `webhookdelivery_status_next_attempt_at` ON `webhook_deliveries` (`status`, `next_attempt_at`);

-- Create index "webhookdelivery_endpoint_id_created_at" to table: "webhook_deliveries"

CREATE INDEX `webhookdelivery_endpoint_id_created_at` ON `webhook_deliveries` (`endpoint_id`, `created_at`);

-- Create "webhook_endpoints" table

CREATE TABLE `webhook_endpoints` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `url` text NOT NULL, `description` text NOT NULL DEFAULT (''), `event_types` json NOT NULL, `enabled` bool NOT NULL DEFAULT (true), `secret` text NOT NULL, `failing_since` datetime NULL, `leased_until` datetime NULL, `lease_token` text NOT NULL DEFAULT (''), `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `webhook_endpoints_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "webhookendpoint_account_id" to table: "webhook_endpoints"

CREATE INDEX `webhookendpoint_account_id` ON `webhook_endpoints` (`account_id`);

-- Create "working_hours" table

CREATE TABLE `working_hours` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `weekday` integer NOT NULL, `opens_at` text NOT NULL, `closes_at` text NOT NULL, `breaks` json NULL, `barber_id` text NOT NULL, `account_id` text NOT NULL, `unit_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `working_hours_barbers_working_hours` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE NO ACTION, CONSTRAINT `working_hours_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `working_hours_units_unit` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE NO ACTION);

-- Create index "workinghours_account_id" to table: "working_hours"

CREATE INDEX `workinghours_account_id` ON `working_hours` (`account_id`);

-- Create index "workinghours_barber_id_unit_id_weekday" to table: "working_hours"

CREATE UNIQUE INDEX `workinghours_barber_id_unit_id_weekday` ON `working_hours` (`barber_id`, `unit_id`, `weekday`);

-- Create "barber_services" table

CREATE TABLE `barber_services` (`barber_id` text NOT NULL, `service_id` text NOT NULL, PRIMARY KEY (`barber_id`, `service_id`), CONSTRAINT `barber_services_barber_id` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE CASCADE, CONSTRAINT `barber_services_service_id` FOREIGN KEY (`service_id`) REFERENCES `services` (`id`) ON DELETE CASCADE);

-- Create "unit_services" table

CREATE TABLE `unit_services` (`unit_id` text NOT NULL, `service_id` text NOT NULL, PRIMARY KEY (`unit_id`, `service_id`), CONSTRAINT `unit_services_unit_id` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE CASCADE, CONSTRAINT `unit_services_service_id` FOREIGN KEY (`service_id`) REFERENCES `services` (`id`) ON DELETE CASCADE);

-- Create "unit_barbers" table

CREATE TABLE `unit_barbers` (`unit_id` text NOT NULL, `barber_id` text NOT NULL, PRIMARY KEY (`unit_id`, `barber_id`), CONSTRAINT `unit_barbers_unit_id` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE CASCADE, CONSTRAINT `unit_barbers_barber_id` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE CASCADE);

-- The DDL Ent does not write (graph/store: HandWrittenDDL).
CREATE TRIGGER IF NOT EXISTS reservations_no_overlap_insert
	BEFORE INSERT ON reservations
	BEGIN
		SELECT RAISE(ABORT, 'reservations_no_overlap') WHERE EXISTS (
			SELECT 1 FROM reservations r
			WHERE r.barber_id = NEW.barber_id AND r.starts_at < NEW.ends_at AND NEW.starts_at < r.ends_at);
	END;
CREATE TRIGGER IF NOT EXISTS reservations_no_overlap_update
	BEFORE UPDATE OF barber_id, starts_at, ends_at ON reservations
	BEGIN
		SELECT RAISE(ABORT, 'reservations_no_overlap') WHERE EXISTS (
			SELECT 1 FROM reservations r
			WHERE r.id <> NEW.id AND r.barber_id = NEW.barber_id AND r.starts_at < NEW.ends_at AND NEW.starts_at < r.ends_at);
	END;
CREATE TRIGGER IF NOT EXISTS reservations_bookings_version_insert AFTER INSERT ON reservations  BEGIN UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id = NEW.barber_id; END;
CREATE TRIGGER IF NOT EXISTS reservations_bookings_version_delete AFTER DELETE ON reservations  BEGIN UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id = OLD.barber_id; END;
CREATE TRIGGER IF NOT EXISTS reservations_bookings_version_update AFTER UPDATE ON reservations  BEGIN UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (OLD.barber_id, NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS units_config_version_insert AFTER INSERT ON units  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS units_config_version_delete AFTER DELETE ON units  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS units_config_version_update AFTER UPDATE ON units  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS services_config_version_insert AFTER INSERT ON services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS services_config_version_delete AFTER DELETE ON services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS services_config_version_update AFTER UPDATE ON services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS barbers_config_version_insert AFTER INSERT ON barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS barbers_config_version_delete AFTER DELETE ON barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS barbers_config_version_update AFTER UPDATE ON barbers WHEN OLD.bookings_version = NEW.bookings_version BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS working_hours_config_version_insert AFTER INSERT ON working_hours  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS working_hours_config_version_delete AFTER DELETE ON working_hours  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS working_hours_config_version_update AFTER UPDATE ON working_hours  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS time_offs_config_version_insert AFTER INSERT ON time_offs  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS time_offs_config_version_delete AFTER DELETE ON time_offs  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS time_offs_config_version_update AFTER UPDATE ON time_offs  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS api_keys_config_version_insert AFTER INSERT ON api_keys  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS api_keys_config_version_delete AFTER DELETE ON api_keys  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id; END;
CREATE TRIGGER IF NOT EXISTS api_keys_config_version_update AFTER UPDATE ON api_keys WHEN OLD.name IS NOT NEW.name OR OLD.scopes IS NOT NEW.scopes OR OLD.revoked_at IS NOT NEW.revoked_at BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_insert AFTER INSERT ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_delete AFTER DELETE ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id); END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_update AFTER UPDATE ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_insert AFTER INSERT ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_delete AFTER DELETE ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_update AFTER UPDATE ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_insert AFTER INSERT ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = NEW.service_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_delete AFTER DELETE ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = OLD.service_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_update AFTER UPDATE ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = NEW.service_id); END;
