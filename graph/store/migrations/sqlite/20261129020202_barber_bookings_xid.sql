-- Drop the triggers, which the rebuild's rename checks; the hand-written DDL below makes them again.
DROP TRIGGER IF EXISTS api_keys_config_version_delete;
DROP TRIGGER IF EXISTS api_keys_config_version_insert;
DROP TRIGGER IF EXISTS api_keys_config_version_update;
DROP TRIGGER IF EXISTS barber_services_config_version_delete;
DROP TRIGGER IF EXISTS barber_services_config_version_insert;
DROP TRIGGER IF EXISTS barber_services_config_version_update;
DROP TRIGGER IF EXISTS barbers_config_version_delete;
DROP TRIGGER IF EXISTS barbers_config_version_insert;
DROP TRIGGER IF EXISTS barbers_config_version_update;
DROP TRIGGER IF EXISTS reservations_bookings_version_delete;
DROP TRIGGER IF EXISTS reservations_bookings_version_insert;
DROP TRIGGER IF EXISTS reservations_bookings_version_update;
DROP TRIGGER IF EXISTS reservations_no_overlap_insert;
DROP TRIGGER IF EXISTS reservations_no_overlap_update;
DROP TRIGGER IF EXISTS services_config_version_delete;
DROP TRIGGER IF EXISTS services_config_version_insert;
DROP TRIGGER IF EXISTS services_config_version_update;
DROP TRIGGER IF EXISTS time_offs_config_version_delete;
DROP TRIGGER IF EXISTS time_offs_config_version_insert;
DROP TRIGGER IF EXISTS time_offs_config_version_update;
DROP TRIGGER IF EXISTS unit_barbers_config_version_delete;
DROP TRIGGER IF EXISTS unit_barbers_config_version_insert;
DROP TRIGGER IF EXISTS unit_barbers_config_version_update;
DROP TRIGGER IF EXISTS unit_services_config_version_delete;
DROP TRIGGER IF EXISTS unit_services_config_version_insert;
DROP TRIGGER IF EXISTS unit_services_config_version_update;
DROP TRIGGER IF EXISTS units_config_version_delete;
DROP TRIGGER IF EXISTS units_config_version_insert;
DROP TRIGGER IF EXISTS units_config_version_update;
DROP TRIGGER IF EXISTS working_hours_config_version_delete;
DROP TRIGGER IF EXISTS working_hours_config_version_insert;
DROP TRIGGER IF EXISTS working_hours_config_version_update;

-- Disable the enforcement of foreign-keys constraints

PRAGMA foreign_keys = off;

-- Create "new_barbers" table

CREATE TABLE `new_barbers` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `active` bool NOT NULL DEFAULT (true), `bookings_version` integer NOT NULL DEFAULT (0), `bookings_xid` integer NULL, `account_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `barbers_accounts_account` FOREIGN KEY (`account_id`) REFERENCES `accounts` (`id`) ON DELETE NO ACTION);

-- Copy rows from old table "barbers" to new temporary table "new_barbers"

INSERT INTO `new_barbers` (`id`, `created_at`, `updated_at`, `name`, `active`, `bookings_version`, `account_id`) SELECT `id`, `created_at`, `updated_at`, `name`, `active`, `bookings_version`, `account_id` FROM `barbers`;

-- Drop "barbers" table after copying rows

DROP TABLE `barbers`;

-- Rename temporary table "new_barbers" to "barbers"

ALTER TABLE `new_barbers` RENAME TO `barbers`;

-- Create index "barber_account_id" to table: "barbers"

CREATE INDEX `barber_account_id` ON `barbers` (`account_id`);

-- Create index "barber_bookings_xid" to table: "barbers"

CREATE INDEX `barber_bookings_xid` ON `barbers` (`bookings_xid`);

-- Enable back the enforcement of foreign-keys constraints

PRAGMA foreign_keys = on;

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
CREATE TRIGGER IF NOT EXISTS api_keys_config_version_update AFTER UPDATE ON api_keys WHEN OLD.name IS NOT NEW.name OR OLD.scopes IS NOT NEW.scopes OR OLD.revoked_at IS NOT NEW.revoked_at OR OLD.max_active_holds IS NOT NEW.max_active_holds BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id; END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_insert AFTER INSERT ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_delete AFTER DELETE ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id); END;
CREATE TRIGGER IF NOT EXISTS barber_services_config_version_update AFTER UPDATE ON barber_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_insert AFTER INSERT ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_delete AFTER DELETE ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = OLD.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_barbers_config_version_update AFTER UPDATE ON unit_barbers  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM barbers WHERE id = NEW.barber_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_insert AFTER INSERT ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = NEW.service_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_delete AFTER DELETE ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = OLD.service_id); END;
CREATE TRIGGER IF NOT EXISTS unit_services_config_version_update AFTER UPDATE ON unit_services  BEGIN UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM services WHERE id = NEW.service_id); END;
