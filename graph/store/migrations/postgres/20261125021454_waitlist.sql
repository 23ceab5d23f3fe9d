-- Modify "holds" table

ALTER TABLE "holds" ADD COLUMN "waitlist_entry_id" character varying NULL;

-- Modify "notifications" table

ALTER TABLE "notifications" DROP CONSTRAINT "notifications_appointments_subject", ALTER COLUMN "appointment" DROP NOT NULL, ALTER COLUMN "appointment_id" DROP NOT NULL, ADD COLUMN "api_key_id" character varying NULL, ADD COLUMN "offer" jsonb NULL, ADD CONSTRAINT "notifications_appointments_subject" FOREIGN KEY ("appointment_id") REFERENCES "appointments" ("id") ON DELETE SET NULL;

-- Create "openings" table

CREATE TABLE "openings" ("id" character varying NOT NULL, "barber_id" character varying NOT NULL, "starts_at" timestamptz NOT NULL, "ends_at" timestamptz NOT NULL, "created_at" timestamptz NOT NULL, "account_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "openings_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION);

-- Create index "opening_account_id" to table: "openings"

CREATE INDEX "opening_account_id" ON "openings" ("account_id");

-- Create index "opening_created_at" to table: "openings"

CREATE INDEX "opening_created_at" ON "openings" ("created_at");

-- Create "waitlist_entries" table

CREATE TABLE "waitlist_entries" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "from_date" character varying NOT NULL, "to_date" character varying NOT NULL, "time_from" character varying NULL, "time_to" character varying NULL, "weekdays" jsonb NOT NULL, "earliest_start" timestamptz NOT NULL, "latest_end" timestamptz NOT NULL, "customer_id" character varying NOT NULL, "client_name" character varying NOT NULL, "client_phone" character varying NOT NULL, "client_email" character varying NULL, "external_reference" character varying NULL, "offer_hold_seconds" bigint NOT NULL, "status" character varying NOT NULL DEFAULT 'waiting', "waiting" boolean NULL, "offer_starts_at" timestamptz NULL, "offer_ends_at" timestamptz NULL, "offer_barber_id" character varying NULL, "offer_hold_id" character varying NULL, "offered_at" timestamptz NULL, "account_id" character varying NOT NULL, "unit_id" character varying NOT NULL, "service_id" character varying NOT NULL, "barber_id" character varying NULL, "appointment_id" character varying NULL, "api_key_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "waitlist_entries_accounts_account" FOREIGN KEY ("account_id") REFERENCES "accounts" ("id") ON DELETE NO ACTION, CONSTRAINT "waitlist_entries_units_unit" FOREIGN KEY ("unit_id") REFERENCES "units" ("id") ON DELETE NO ACTION, CONSTRAINT "waitlist_entries_services_service" FOREIGN KEY ("service_id") REFERENCES "services" ("id") ON DELETE NO ACTION, CONSTRAINT "waitlist_entries_barbers_barber" FOREIGN KEY ("barber_id") REFERENCES "barbers" ("id") ON DELETE SET NULL, CONSTRAINT "waitlist_entries_appointments_appointment" FOREIGN KEY ("appointment_id") REFERENCES "appointments" ("id") ON DELETE SET NULL, CONSTRAINT "waitlist_entries_api_keys_api_key" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON DELETE NO ACTION);

-- Create index "waitlistentry_account_id" to table: "waitlist_entries"

CREATE INDEX "waitlistentry_account_id" ON "waitlist_entries" ("account_id");

-- Create index "waitlistentry_api_key_id_external_reference" to table: "waitlist_entries"

CREATE UNIQUE INDEX "waitlistentry_api_key_id_external_reference" ON "waitlist_entries" ("api_key_id", "external_reference");

-- Create index "waitlistentry_one_waiting" to table: "waitlist_entries"

CREATE UNIQUE INDEX "waitlistentry_one_waiting" ON "waitlist_entries" ("account_id", "client_phone", "unit_id", "service_id", "waiting");

-- Create index "waitlistentry_account_id_waiting_earliest_start" to table: "waitlist_entries"

CREATE INDEX "waitlistentry_account_id_waiting_earliest_start" ON "waitlist_entries" ("account_id", "waiting", "earliest_start");

-- Create index "waitlistentry_unit_id_created_at" to table: "waitlist_entries"

CREATE INDEX "waitlistentry_unit_id_created_at" ON "waitlist_entries" ("unit_id", "created_at");

-- Create index "waitlistentry_api_key_id_waiting" to table: "waitlist_entries"

CREATE INDEX "waitlistentry_api_key_id_waiting" ON "waitlist_entries" ("api_key_id", "waiting");

-- Create index "waitlistentry_offer_hold_id" to table: "waitlist_entries"

CREATE INDEX "waitlistentry_offer_hold_id" ON "waitlist_entries" ("offer_hold_id");
