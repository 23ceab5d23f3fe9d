-- Disable the enforcement of foreign-keys constraints

PRAGMA foreign_keys = off;

-- Add column "waitlist_entry_id" to table: "holds"

ALTER TABLE `holds` ADD COLUMN `waitlist_entry_id` text NULL;

-- Create "new_notifications" table

CREATE TABLE `new_notifications` (`id` text NOT NULL, `type` text NOT NULL, `source` text NOT NULL, `appointment` json NULL, `api_key_id` text NULL, `offer` json NULL, `previous_starts_at` datetime NULL, `created_at` datetime NOT NULL, `account_id` text NOT NULL, `appointment_id` text NULL, PRIMARY KEY (`id`), CONSTRAINT `notifications_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_appointments_subject` FOREIGN KEY (`appointment_id`) REFERENCES `appointments` (`id`) ON DELETE SET NULL);

-- Copy rows from old table "notifications" to new temporary table "new_notifications"

INSERT INTO `new_notifications` (`id`, `type`, `source`, `appointment`, `previous_starts_at`, `created_at`, `account_id`, `appointment_id`) SELECT `id`, `type`, `source`, `appointment`, `previous_starts_at`, `created_at`, `account_id`, `appointment_id` FROM `notifications`;

-- Drop "notifications" table after copying rows

DROP TABLE `notifications`;

-- Rename temporary table "new_notifications" to "notifications"

ALTER TABLE `new_notifications` RENAME TO `notifications`;

-- Create index "notification_account_id" to table: "notifications"

CREATE INDEX `notification_account_id` ON `notifications` (`account_id`);

-- Create index "notification_account_id_created_at" to table: "notifications"

CREATE INDEX `notification_account_id_created_at` ON `notifications` (`account_id`, `created_at`);

-- Create "openings" table

CREATE TABLE `openings` (`id` text NOT NULL, `barber_id` text NOT NULL, `starts_at` datetime NOT NULL, `ends_at` datetime NOT NULL, `created_at` datetime NOT NULL, `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `openings_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Create index "opening_account_id" to table: "openings"

CREATE INDEX `opening_account_id` ON `openings` (`account_id`);

-- Create index "opening_created_at" to table: "openings"

CREATE INDEX `opening_created_at` ON `openings` (`created_at`);

-- Create "waitlist_entries" table

CREATE TABLE `waitlist_entries` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `from_date` text NOT NULL, `to_date` text NOT NULL, `time_from` text NULL, `time_to` text NULL, `weekdays` json NOT NULL, `earliest_start` datetime NOT NULL, `latest_end` datetime NOT NULL, `customer_id` text NOT NULL, `client_name` text NOT NULL, `client_phone` text NOT NULL, `client_email` text NULL, `external_reference` text NULL, `offer_hold_seconds` integer NOT NULL, `status` text NOT NULL DEFAULT ('waiting'), `waiting` bool NULL, `offer_starts_at` datetime NULL, `offer_ends_at` datetime NULL, `offer_barber_id` text NULL, `offer_hold_id` text NULL, `offered_at` datetime NULL, `account_id` text NOT NULL, `unit_id` text NOT NULL, `service_id` text NOT NULL, `barber_id` text NULL, `appointment_id` text NULL, `api_key_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `waitlist_entries_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION, CONSTRAINT `waitlist_entries_units_unit` FOREIGN KEY (`unit_id`) REFERENCES `units` (`id`) ON DELETE NO ACTION, CONSTRAINT `waitlist_entries_services_service` FOREIGN KEY (`service_id`) REFERENCES `services` (`id`) ON DELETE NO ACTION, CONSTRAINT `waitlist_entries_barbers_barber` FOREIGN KEY (`barber_id`) REFERENCES `barbers` (`id`) ON DELETE SET NULL, CONSTRAINT `waitlist_entries_appointments_appointment` FOREIGN KEY (`appointment_id`) REFERENCES `appointments` (`id`) ON DELETE SET NULL, CONSTRAINT `waitlist_entries_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);

-- Create index "waitlistentry_account_id" to table: "waitlist_entries"

CREATE INDEX `waitlistentry_account_id` ON `waitlist_entries` (`account_id`);

-- Create index "waitlistentry_api_key_id_external_reference" to table: "waitlist_entries"

CREATE UNIQUE INDEX `waitlistentry_api_key_id_external_reference` ON `waitlist_entries` (`api_key_id`, `external_reference`);

-- Create index "waitlistentry_one_waiting" to table: "waitlist_entries"

CREATE UNIQUE INDEX `waitlistentry_one_waiting` ON `waitlist_entries` (`account_id`, `client_phone`, `unit_id`, `service_id`, `waiting`);

-- Create index "waitlistentry_account_id_waiting_earliest_start" to table: "waitlist_entries"

CREATE INDEX `waitlistentry_account_id_waiting_earliest_start` ON `waitlist_entries` (`account_id`, `waiting`, `earliest_start`);

-- Create index "waitlistentry_unit_id_created_at" to table: "waitlist_entries"

CREATE INDEX `waitlistentry_unit_id_created_at` ON `waitlist_entries` (`unit_id`, `created_at`);

-- Create index "waitlistentry_api_key_id_waiting" to table: "waitlist_entries"

CREATE INDEX `waitlistentry_api_key_id_waiting` ON `waitlist_entries` (`api_key_id`, `waiting`);

-- Create index "waitlistentry_offer_hold_id" to table: "waitlist_entries"

CREATE INDEX `waitlistentry_offer_hold_id` ON `waitlist_entries` (`offer_hold_id`);

-- Enable back the enforcement of foreign-keys constraints

PRAGMA foreign_keys = on;
