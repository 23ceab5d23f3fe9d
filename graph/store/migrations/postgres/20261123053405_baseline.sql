-- Create "accounts" table

CREATE TABLE "accounts" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "config_version" bigint NOT NULL DEFAULT 0, PRIMARY KEY ("id"));

-- Create "api_keys" table

CREATE TABLE "api_keys" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "prefix" character varying NOT NULL, "secret_hash" character varying NOT NULL, "scopes" jsonb NOT NULL, "last_used_at" timestamptz NULL, "revoked_at" timestamptz NULL, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "api_keys_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "apikey_account_id" to table: "api_keys"

CREATE INDEX "apikey_account_id" ON "api_keys" ("account_id");

-- Create index "apikey_secret_hash" to table: "api_keys"

CREATE UNIQUE INDEX "apikey_secret_hash" ON "api_keys" ("secret_hash");

-- Create "units" table

CREATE TABLE "units" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "timezone" character varying NOT NULL, "address" character varying NOT NULL DEFAULT '', "phone" character varying NOT NULL DEFAULT '', "active" boolean NOT NULL DEFAULT true, "slot_step_minutes" bigint NOT NULL DEFAULT 15, "min_lead_minutes" bigint NOT NULL DEFAULT 60, "horizon_days" bigint NOT NULL DEFAULT 365, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "units_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "unit_account_id" to table: "units"

CREATE INDEX "unit_account_id" ON "units" ("account_id");

-- Create "services" table

CREATE TABLE "services" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "description" character varying NOT NULL DEFAULT '', "duration_minutes" bigint NOT NULL, "buffer_minutes" bigint NOT NULL DEFAULT 0, "price_amount" bigint NOT NULL, "price_currency" character varying NOT NULL, "active" boolean NOT NULL DEFAULT true, "bookable_online" boolean NOT NULL DEFAULT true, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "services_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "service_account_id" to table: "services"

CREATE INDEX "service_account_id" ON "services" ("account_id");

-- Create "barbers" table

CREATE TABLE "barbers" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "active" boolean NOT NULL DEFAULT true, "bookings_version" bigint NOT NULL DEFAULT 0, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "barbers_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "barber_account_id" to table: "barbers"

CREATE INDEX "barber_account_id" ON "barbers" ("account_id");

-- Create "customers" table

CREATE TABLE "customers" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "phone" character varying NOT NULL, "email" character varying NULL, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "customers_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "customer_account_id" to table: "customers"

CREATE INDEX "customer_account_id" ON "customers" ("account_id");

-- Create index "customer_account_id_phone" to table: "customers"

CREATE UNIQUE INDEX "customer_account_id_phone" ON "customers" ("account_id", "phone");

-- Create "holds" table

CREATE TABLE "holds" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "starts_at" timestamptz NOT NULL, "ends_at" timestamptz NOT NULL, "status" character varying NOT NULL DEFAULT 'active', "expires_at" timestamptz NOT NULL, "account_id" character varying NOT NULL, "unit_id" character varying NOT NULL, "service_id" character varying NOT NULL, "barber_id" character varying NOT NULL, "api_key_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "holds_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "holds_units_unit" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE NO ACTION, CONSTRAINT "holds_services_service" FOREIGN KEY ("service_id") REFERENCES "services" ("id") ON DELETE NO ACTION, CONSTRAINT "holds_barbers_barber" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE NO ACTION, CONSTRAINT "holds_api_keys_api_key" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE NO ACTION);

-- Create index "hold_account_id" to table: "holds"

CREATE INDEX "hold_account_id" ON "holds" ("account_id");

-- Create index "hold_status_expires_at" to table: "holds"

CREATE INDEX "hold_status_expires_at" ON "holds" ("status", "expires_at");

-- Create index "hold_barber_id_starts_at" to table: "holds"

CREATE INDEX "hold_barber_id_starts_at" ON "holds" ("barber_id", "starts_at");

-- Create index "hold_api_key_id_status_expires_at" to table: "holds"

CREATE INDEX "hold_api_key_id_status_expires_at" ON "holds" ("api_key_id", "status", "expires_at");

-- Create "appointments" table

CREATE TABLE "appointments" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "client_name" character varying NOT NULL, "client_phone" character varying NOT NULL, "client_email" character varying NULL, "external_reference" character varying NULL, "status" character varying NOT NULL DEFAULT 'confirmed', "starts_at" timestamptz NOT NULL, "ends_at" timestamptz NOT NULL, "source" character varying NOT NULL DEFAULT 'api', "cancelled_at" timestamptz NULL, "cancellation_reason" character varying NULL, "reminded_at" timestamptz NULL, "version" bigint NOT NULL DEFAULT 1, "account_id" character varying NOT NULL, "unit_id" character varying NOT NULL, "service_id" character varying NOT NULL, "barber_id" character varying NOT NULL, "customer_id" character varying NOT NULL, "api_key_id" character varying NOT NULL, "hold_id" character varying NULL, PRIMARY KEY ("id"), CONSTRAINT "appointments_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_units_unit" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_services_service" FOREIGN KEY ("service_id") REFERENCES "services" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_barbers_barber" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_customers_customer" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_api_keys_api_key" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE NO ACTION, CONSTRAINT "appointments_holds_hold" FOREIGN KEY ("hold_id") REFERENCES "holds" ("id") ON DELETE SET NULL);

-- Create index "appointment_account_id" to table: "appointments"

CREATE INDEX "appointment_account_id" ON "appointments" ("account_id");

-- Create index "appointment_api_key_id_external_reference" to table: "appointments"

CREATE UNIQUE INDEX "appointment_api_key_id_external_reference" ON "appointments" ("api_key_id", "external_reference");

-- Create index "appointment_barber_id_starts_at" to table: "appointments"

CREATE INDEX "appointment_barber_id_starts_at" ON "appointments" ("barber_id", "starts_at");

-- Create index "appointment_account_id_starts_at" to table: "appointments"

CREATE INDEX "appointment_account_id_starts_at" ON "appointments" ("account_id", "starts_at");

-- Create index "appointment_account_id_client_phone_starts_at" to table: "appointments"

CREATE INDEX "appointment_account_id_client_phone_starts_at" ON "appointments" ("account_id", "client_phone", "starts_at");

-- Create index "appointment_status_starts_at" to table: "appointments"

CREATE INDEX "appointment_status_starts_at" ON "appointments" ("status", "starts_at");

-- Create "barber_services" table

CREATE TABLE "barber_services" ("barber_id" character varying NOT NULL, "service_id" character varying NOT NULL, PRIMARY KEY ("barber_id", "service_id"), CONSTRAINT "barber_services_barber_id" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE CASCADE, CONSTRAINT "barber_services_service_id" FOREIGN KEY ("service_id") REFERENCES "services" ("id") ON DELETE CASCADE);

-- Create "notifications" table

CREATE TABLE "notifications" ("id" character varying NOT NULL, "type" character varying NOT NULL, "source" character varying NOT NULL, "appointment" jsonb NOT NULL, "previous_starts_at" timestamptz NULL, "created_at" timestamptz NOT NULL, "account_id" character varying NOT NULL, "appointment_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "notifications_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "notifications_appointments_subject" FOREIGN KEY ("appointment_id") REFERENCES "appointments" ("id") ON DELETE NO ACTION);

-- Create index "notification_account_id" to table: "notifications"

CREATE INDEX "notification_account_id" ON "notifications" ("account_id");

-- Create index "notification_account_id_created_at" to table: "notifications"

CREATE INDEX "notification_account_id_created_at" ON "notifications" ("account_id", "created_at");

-- Create "deliveries" table

CREATE TABLE "deliveries" ("id" character varying NOT NULL, "delivered_at" timestamptz NULL, "account_id" character varying NOT NULL, "api_key_id" character varying NOT NULL, "notification_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "deliveries_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "deliveries_api_keys_api_key" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE NO ACTION, CONSTRAINT "deliveries_notifications_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE NO ACTION);

-- Create index "delivery_account_id" to table: "deliveries"

CREATE INDEX "delivery_account_id" ON "deliveries" ("account_id");

-- Create index "delivery_api_key_id_notification_id" to table: "deliveries"

CREATE UNIQUE INDEX "delivery_api_key_id_notification_id" ON "deliveries" ("api_key_id", "notification_id");

-- Create index "delivery_pending" to table: "deliveries"

CREATE INDEX "delivery_pending" ON "deliveries" ("api_key_id", "notification_id") WHERE delivered_at IS NULL;

-- Create "reservations" table

CREATE TABLE "reservations" ("id" character varying NOT NULL, "starts_at" timestamptz NOT NULL, "ends_at" timestamptz NOT NULL, "expires_at" timestamptz NULL, "account_id" character varying NOT NULL, "barber_id" character varying NOT NULL, "hold_id" character varying NULL, "appointment_id" character varying NULL, PRIMARY KEY ("id"), CONSTRAINT "reservations_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "reservations_barbers_barber" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE NO ACTION, CONSTRAINT "reservations_holds_hold" FOREIGN KEY ("hold_id") REFERENCES "holds" ("id") ON DELETE SET NULL, CONSTRAINT "reservations_appointments_appointment" FOREIGN KEY ("appointment_id") REFERENCES "appointments" ("id") ON DELETE SET NULL);

-- Create index "reservation_account_id" to table: "reservations"

CREATE INDEX "reservation_account_id" ON "reservations" ("account_id");

-- Create index "reservation_barber_id_starts_at" to table: "reservations"

CREATE INDEX "reservation_barber_id_starts_at" ON "reservations" ("barber_id", "starts_at");

-- Create index "reservation_hold_id" to table: "reservations"

CREATE UNIQUE INDEX "reservation_hold_id" ON "reservations" ("hold_id");

-- Create index "reservation_appointment_id" to table: "reservations"

CREATE UNIQUE INDEX "reservation_appointment_id" ON "reservations" ("appointment_id");

-- Create "time_offs" table

CREATE TABLE "time_offs" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "starts_at" timestamptz NOT NULL, "ends_at" timestamptz NOT NULL, "reason" character varying NOT NULL DEFAULT '', "barber_id" character varying NOT NULL, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "time_offs_barbers_time_off" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE NO ACTION, CONSTRAINT "time_offs_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "timeoff_account_id" to table: "time_offs"

CREATE INDEX "timeoff_account_id" ON "time_offs" ("account_id");

-- Create index "timeoff_barber_id_starts_at" to table: "time_offs"

CREATE INDEX "timeoff_barber_id_starts_at" ON "time_offs" ("barber_id", "starts_at");

-- Create "unit_barbers" table

CREATE TABLE "unit_barbers" ("unit_id" character varying NOT NULL, "barber_id" character varying NOT NULL, PRIMARY KEY ("unit_id", "barber_id"), CONSTRAINT "unit_barbers_unit_id" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE CASCADE, CONSTRAINT "unit_barbers_barber_id" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE CASCADE);

-- Create "unit_services" table

CREATE TABLE "unit_services" ("unit_id" character varying NOT NULL, "service_id" character varying NOT NULL, PRIMARY KEY ("unit_id", "service_id"), CONSTRAINT "unit_services_unit_id" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE CASCADE, CONSTRAINT "unit_services_service_id" FOREIGN KEY ("service_id") REFERENCES "services" ("id") ON DELETE CASCADE);

-- Create "webhook_endpoints" table

CREATE TABLE "webhook_endpoints" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "url" character varying NOT NULL, "description" character varying NOT NULL DEFAULT '', "event_types" jsonb NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "secret" character varying NOT NULL, "failing_since" timestamptz NULL, "leased_until" timestamptz NULL, "lease_token" character varying NOT NULL DEFAULT '', "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_endpoints_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "webhookendpoint_account_id" to table: "webhook_endpoints"

CREATE INDEX "webhookendpoint_account_id" ON "webhook_endpoints" ("account_id");

-- Create "webhook_deliveries" table

CREATE TABLE "webhook_deliveries" ("id" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'pending', "attempt_count" bigint NOT NULL DEFAULT 0, "next_attempt_at" timestamptz NOT NULL, "retry_since" timestamptz NULL, "created_at" timestamptz NOT NULL, "delivered_at" timestamptz NULL, "account_id" character varying NOT NULL, "notification_id" character varying NOT NULL, "endpoint_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_deliveries_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "webhook_deliveries_notifications_notification" FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON DELETE NO ACTION, CONSTRAINT "webhook_deliveries_webhook_endpoints_deliveries" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints" ("id") ON DELETE CASCADE);

-- Create index "webhookdelivery_account_id" to table: "webhook_deliveries"

CREATE INDEX "webhookdelivery_account_id" ON "webhook_deliveries" ("account_id");

-- Create index "webhookdelivery_status_next_attempt_at" to table: "webhook_deliveries"

CREATE INDEX "webhookdelivery_status_next_attempt_at" ON "webhook_deliveries" ("status", "next_attempt_at");

-- Create index "webhookdelivery_endpoint_id_created_at" to table: "webhook_deliveries"

CREATE INDEX "webhookdelivery_endpoint_id_created_at" ON "webhook_deliveries" ("endpoint_id", "created_at");

-- Create "webhook_attempts" table

CREATE TABLE "webhook_attempts" ("id" character varying NOT NULL, "attempted_at" timestamptz NOT NULL, "status_code" bigint NULL, "latency_ms" bigint NOT NULL, "error" character varying NOT NULL DEFAULT '', "account_id" character varying NOT NULL, "delivery_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_attempts_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "webhook_attempts_webhook_deliveries_attempts" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries" ("id") ON DELETE CASCADE);

-- Create index "webhookattempt_account_id" to table: "webhook_attempts"

CREATE INDEX "webhookattempt_account_id" ON "webhook_attempts" ("account_id");

-- Create index "webhookattempt_delivery_id_attempted_at" to table: "webhook_attempts"

CREATE INDEX "webhookattempt_delivery_id_attempted_at" ON "webhook_attempts" ("delivery_id", "attempted_at");

-- Create "working_hours" table

CREATE TABLE "working_hours" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "weekday" bigint NOT NULL, "opens_at" character varying NOT NULL, "closes_at" character varying NOT NULL, "breaks" jsonb NULL, "barber_id" character varying NOT NULL, "account_id" character varying NOT NULL, "unit_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "working_hours_barbers_working_hours" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE NO ACTION, CONSTRAINT "working_hours_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "working_hours_units_unit" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE NO ACTION);

-- Create index "workinghours_account_id" to table: "working_hours"

CREATE INDEX "workinghours_account_id" ON "working_hours" ("account_id");

-- Create index "workinghours_barber_id_unit_id_weekday" to table: "working_hours"

CREATE UNIQUE INDEX "workinghours_barber_id_unit_id_weekday" ON "working_hours" ("barber_id", "unit_id", "weekday");

-- The DDL Ent does not write (graph/store: HandWrittenDDL).
CREATE EXTENSION IF NOT EXISTS btree_gist;
DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'reservations_no_overlap' AND connamespace = current_schema()::regnamespace) THEN
			ALTER TABLE reservations ADD CONSTRAINT reservations_no_overlap
				EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&);
		END IF;
	END $$;
CREATE OR REPLACE FUNCTION barberd_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP = 'DELETE' THEN
				UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id;
			ELSE
				UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id;
			END IF;
			RETURN NULL;
		END $$;
DROP TRIGGER IF EXISTS reservations_bookings_version ON reservations;
DROP FUNCTION IF EXISTS barberd_bookings_changed();
CREATE OR REPLACE FUNCTION barberd_reservations_bookings_version_insert() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM new_rows);
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER reservations_bookings_version_insert
				AFTER INSERT ON reservations REFERENCING NEW TABLE AS new_rows
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_reservations_bookings_version_insert();
CREATE OR REPLACE FUNCTION barberd_reservations_bookings_version_delete() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM old_rows);
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER reservations_bookings_version_delete
				AFTER DELETE ON reservations REFERENCING OLD TABLE AS old_rows
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_reservations_bookings_version_delete();
CREATE OR REPLACE FUNCTION barberd_reservations_bookings_version_update() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM old_rows UNION SELECT barber_id FROM new_rows);
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER reservations_bookings_version_update
				AFTER UPDATE ON reservations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_reservations_bookings_version_update();
CREATE OR REPLACE TRIGGER units_config_version
				AFTER INSERT OR DELETE ON units
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER units_config_version_update
				AFTER UPDATE ON units FOR EACH ROW 
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER services_config_version
				AFTER INSERT OR DELETE ON services
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER services_config_version_update
				AFTER UPDATE ON services FOR EACH ROW 
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER barbers_config_version
				AFTER INSERT OR DELETE ON barbers
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER barbers_config_version_update
				AFTER UPDATE ON barbers FOR EACH ROW WHEN (OLD.bookings_version = NEW.bookings_version)
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER working_hours_config_version
				AFTER INSERT OR DELETE ON working_hours
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER working_hours_config_version_update
				AFTER UPDATE ON working_hours FOR EACH ROW 
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER time_offs_config_version
				AFTER INSERT OR DELETE ON time_offs
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER time_offs_config_version_update
				AFTER UPDATE ON time_offs FOR EACH ROW 
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER api_keys_config_version
				AFTER INSERT OR DELETE ON api_keys
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE TRIGGER api_keys_config_version_update
				AFTER UPDATE ON api_keys FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at)
				EXECUTE FUNCTION barberd_config_changed();
CREATE OR REPLACE FUNCTION barberd_config_changed_by_barber_id() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'DELETE' THEN
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id);
				ELSE
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id);
				END IF;
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER barber_services_config_version
				AFTER INSERT OR UPDATE OR DELETE ON barber_services
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed_by_barber_id();
CREATE OR REPLACE FUNCTION barberd_config_changed_by_barber_id() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'DELETE' THEN
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id);
				ELSE
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id);
				END IF;
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER unit_barbers_config_version
				AFTER INSERT OR UPDATE OR DELETE ON unit_barbers
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed_by_barber_id();
CREATE OR REPLACE FUNCTION barberd_config_changed_by_service_id() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'DELETE' THEN
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM services WHERE id = OLD.service_id);
				ELSE
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM services WHERE id = NEW.service_id);
				END IF;
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER unit_services_config_version
				AFTER INSERT OR UPDATE OR DELETE ON unit_services
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed_by_service_id();
