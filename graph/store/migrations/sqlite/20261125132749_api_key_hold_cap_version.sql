-- The DDL Ent does not write (graph/store: HandWrittenDDL).
DROP TRIGGER IF EXISTS api_keys_config_version_update;
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
