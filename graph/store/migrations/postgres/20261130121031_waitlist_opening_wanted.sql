-- The DDL Ent does not write (graph/store: HandWrittenDDL).
CREATE EXTENSION IF NOT EXISTS btree_gist;
DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'reservations_no_overlap' AND connamespace = current_schema()::regnamespace) THEN
			ALTER TABLE reservations ADD CONSTRAINT reservations_no_overlap
				EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&);
		END IF;
	END $$;
CREATE TABLE IF NOT EXISTS barberd_bookings_changes (xid bigint NOT NULL, barber_id text NOT NULL, version bigint NOT NULL);
CREATE INDEX IF NOT EXISTS barberd_bookings_changes_xid ON barberd_bookings_changes (xid);
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
				IF NOT EXISTS (SELECT barber_id FROM new_rows) THEN
					RETURN NULL;
				END IF;
				WITH bumped AS (
					UPDATE barbers SET bookings_version = bookings_version + 1
					WHERE id IN (SELECT barber_id FROM new_rows) RETURNING id, bookings_version)
				INSERT INTO barberd_bookings_changes (xid, barber_id, version)
				SELECT pg_current_xact_id()::text::bigint, id, bookings_version FROM bumped;
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER reservations_bookings_version_insert
				AFTER INSERT ON reservations REFERENCING NEW TABLE AS new_rows
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_reservations_bookings_version_insert();
CREATE OR REPLACE FUNCTION barberd_reservations_bookings_version_delete() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NOT EXISTS (SELECT barber_id FROM old_rows WHERE ends_at > now()) THEN
					RETURN NULL;
				END IF;
				WITH bumped AS (
					UPDATE barbers SET bookings_version = bookings_version + 1
					WHERE id IN (SELECT barber_id FROM old_rows WHERE ends_at > now()) RETURNING id, bookings_version)
				INSERT INTO barberd_bookings_changes (xid, barber_id, version)
				SELECT pg_current_xact_id()::text::bigint, id, bookings_version FROM bumped;
				RETURN NULL;
			END $$;
CREATE OR REPLACE TRIGGER reservations_bookings_version_delete
				AFTER DELETE ON reservations REFERENCING OLD TABLE AS old_rows
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_reservations_bookings_version_delete();
CREATE OR REPLACE FUNCTION barberd_reservations_bookings_version_update() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NOT EXISTS (SELECT barber_id FROM old_rows UNION SELECT barber_id FROM new_rows) THEN
					RETURN NULL;
				END IF;
				WITH bumped AS (
					UPDATE barbers SET bookings_version = bookings_version + 1
					WHERE id IN (SELECT barber_id FROM old_rows UNION SELECT barber_id FROM new_rows) RETURNING id, bookings_version)
				INSERT INTO barberd_bookings_changes (xid, barber_id, version)
				SELECT pg_current_xact_id()::text::bigint, id, bookings_version FROM bumped;
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
				AFTER UPDATE ON api_keys FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.max_active_holds IS DISTINCT FROM NEW.max_active_holds)
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
CREATE INDEX IF NOT EXISTS waitlist_entries_waiting_span ON waitlist_entries USING gist (account_id, tstzrange(earliest_start, GREATEST(earliest_start, COALESCE(window_end, latest_end)), '[)')) WHERE waiting;
CREATE OR REPLACE FUNCTION barberd_zone_known(name text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
		BEGIN
			PERFORM now() AT TIME ZONE name;
			RETURN true;
		EXCEPTION WHEN OTHERS THEN
			RETURN false;
		END $$;
CREATE OR REPLACE FUNCTION barberd_hours_refuse(p_barber text, p_unit text, p_from timestamptz, p_to timestamptz,
		p_prev timestamptz, p_nxt timestamptz, p_duration bigint, p_buffer bigint) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
		BEGIN
			RETURN EXISTS (SELECT 1 FROM units u
JOIN working_hours h ON h.unit_id = u.id AND h.barber_id = p_barber
CROSS JOIN LATERAL (SELECT CASE WHEN barberd_zone_known(u.timezone) THEN u.timezone END AS tz OFFSET 0) z
CROSS JOIN LATERAL (SELECT
  GREATEST(p_prev, p_from - (p_duration + p_buffer) * interval '1 minute') AS lo,
  LEAST(p_nxt - (p_duration + p_buffer) * interval '1 minute', p_to) AS hi,
  p_duration * interval '1 minute' AS dur,
  ((p_from - (p_duration + p_buffer) * interval '1 minute') AT TIME ZONE z.tz)::date AS d OFFSET 0) r
WHERE u.id = p_unit AND h.weekday = EXTRACT(DOW FROM r.d)
AND ((p_to - interval '1 microsecond') AT TIME ZONE z.tz)::date = r.d
AND ((r.d + 1)::timestamp AT TIME ZONE z.tz) - (r.d::timestamp AT TIME ZONE z.tz) = interval '24 hours'
AND h.opens_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' AND h.closes_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$'
AND COALESCE(jsonb_typeof(h.breaks), 'null') IN ('array', 'null')
AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(h.breaks) = 'array' THEN h.breaks ELSE '[]'::jsonb END) AS x WHERE NOT (btrim(split_part(x, '-', 1)) ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' AND btrim(split_part(x, '-', 2)) ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$'))
AND NOT EXISTS (SELECT 1 FROM (SELECT r.lo AS c UNION ALL SELECT (CASE WHEN h.opens_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (h.opens_at)::time) AT TIME ZONE z.tz END)
  UNION ALL SELECT (CASE WHEN btrim(split_part(x, '-', 2)) ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (btrim(split_part(x, '-', 2)))::time) AT TIME ZONE z.tz END) FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(h.breaks) = 'array' THEN h.breaks ELSE '[]'::jsonb END) AS x) starts
  WHERE starts.c >= r.lo AND starts.c <= r.hi AND starts.c >= (CASE WHEN h.opens_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (h.opens_at)::time) AT TIME ZONE z.tz END) AND starts.c + r.dur <= (CASE WHEN h.closes_at ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (h.closes_at)::time) AT TIME ZONE z.tz END)
  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(h.breaks) = 'array' THEN h.breaks ELSE '[]'::jsonb END) AS x WHERE (CASE WHEN btrim(split_part(x, '-', 1)) ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (btrim(split_part(x, '-', 1)))::time) AT TIME ZONE z.tz END) < starts.c + r.dur AND (CASE WHEN btrim(split_part(x, '-', 2)) ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$' THEN (r.d + (btrim(split_part(x, '-', 2)))::time) AT TIME ZONE z.tz END) > starts.c)));
		END $$;
CREATE OR REPLACE FUNCTION barberd_opening_wanted(p_account text, p_barber text, p_from timestamptz, p_to timestamptz,
		p_active timestamptz, p_written_barber text, p_written_from timestamptz, p_written_to timestamptz) RETURNS boolean LANGUAGE plpgsql STABLE
		SET plan_cache_mode = force_generic_plan AS $$
		BEGIN
			IF NOT EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.account_id = p_account AND w.waiting AND tstzrange(earliest_start, GREATEST(earliest_start, COALESCE(window_end, latest_end)), '[)') && tstzrange(p_from, p_to, '[)')) THEN
				RETURN false;
			END IF;
			RETURN EXISTS (SELECT 1 FROM (SELECT GREATEST((SELECT r.ends_at FROM reservations r WHERE r.starts_at < p_from AND r.barber_id = p_barber AND (r.expires_at IS NULL OR r.expires_at > p_active) ORDER BY r.starts_at DESC LIMIT 1), CASE WHEN p_written_barber = p_barber AND p_written_from < p_from THEN p_written_to END) AS prev,
LEAST((SELECT r.starts_at FROM reservations r WHERE r.starts_at >= p_to AND r.barber_id = p_barber AND (r.expires_at IS NULL OR r.expires_at > p_active) ORDER BY r.starts_at LIMIT 1), CASE WHEN p_written_barber = p_barber AND p_written_from >= p_to THEN p_written_from END) AS nxt OFFSET 0) g WHERE EXISTS (SELECT 1 FROM (SELECT DISTINCT w.unit_id, s.duration_minutes, s.buffer_minutes FROM waitlist_entries w JOIN services s ON s.id = w.service_id
WHERE w.account_id = p_account AND w.waiting AND tstzrange(earliest_start, GREATEST(earliest_start, COALESCE(window_end, latest_end)), '[)') && tstzrange(p_from, p_to, '[)')
AND (w.barber_id IS NULL OR w.barber_id = p_barber)
AND EXISTS (SELECT 1 FROM unit_barbers ub WHERE ub.unit_id = w.unit_id AND ub.barber_id = p_barber)
AND EXISTS (SELECT 1 FROM barber_services bs WHERE bs.barber_id = p_barber AND bs.service_id = w.service_id)
AND (g.prev IS NULL OR g.nxt IS NULL OR g.prev + (s.duration_minutes + s.buffer_minutes) * interval '1 minute' <= g.nxt) OFFSET 0) c
WHERE NOT barberd_hours_refuse(p_barber, c.unit_id, p_from, p_to, g.prev, g.nxt, c.duration_minutes, c.buffer_minutes)));
		END $$;
CREATE OR REPLACE FUNCTION barberd_lock_key_holds(p_key text, p_account text, p_default bigint, p_active text, p_now timestamptz)
		RETURNS TABLE (o_cap bigint, o_active bigint) LANGUAGE plpgsql VOLATILE AS $$
		BEGIN
			PERFORM 1 FROM api_keys k WHERE k.id = p_key AND (p_account IS NULL OR k.account_id = p_account) FOR NO KEY UPDATE;
			RETURN QUERY SELECT CAST(k.max_active_holds AS bigint), CASE WHEN COALESCE(k.max_active_holds, p_default) > 0 THEN (SELECT COUNT(*) FROM holds h
WHERE h.api_key_id = k.id AND h.status = p_active AND h.expires_at > p_now AND h.account_id = k.account_id) ELSE 0 END
FROM api_keys k WHERE k.id = p_key AND (p_account IS NULL OR k.account_id = p_account);
		END $$;
CREATE OR REPLACE FUNCTION barberd_key_holds_checked() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE
			asked text := current_setting('barberd.key_holds_check', true);
			most bigint;
			active bigint;
		BEGIN
			IF asked IS NULL OR asked = '' OR NEW.status <> 'active' THEN
				RETURN NULL;
			END IF;
			SELECT COALESCE(o_cap, split_part(asked, ' ', 1)::bigint), o_active INTO most, active
				FROM barberd_lock_key_holds(NEW.api_key_id, NEW.account_id, split_part(asked, ' ', 1)::bigint,
					NEW.status, split_part(asked, ' ', 2)::timestamptz);
			IF most > 0 AND active > most THEN
				RAISE EXCEPTION 'the API key % would hold % slots, more than its cap of %', NEW.api_key_id, active, most
					USING ERRCODE = 'KH001';
			END IF;
			RETURN NULL;
		END $$;
DROP TRIGGER IF EXISTS holds_key_cap ON holds;
CREATE CONSTRAINT TRIGGER holds_key_cap AFTER INSERT ON holds DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION barberd_key_holds_checked();
