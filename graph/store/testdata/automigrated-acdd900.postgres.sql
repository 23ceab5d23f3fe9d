-- A database made by barberd at commit acdd900 (the automatic migration of
-- the schema before the first versioned migration's successors), with
-- seed-demo's account: pg_dump --inserts --no-owner --no-privileges, psql's
-- meta-commands removed. migrate_test.go adopts and upgrades it.
--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: btree_gist; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;


--
-- Name: EXTENSION btree_gist; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';


--
-- Name: barberd_config_changed(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_config_changed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
		BEGIN
			IF TG_OP = 'DELETE' THEN
				UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id;
			ELSE
				UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id;
			END IF;
			RETURN NULL;
		END $$;


--
-- Name: barberd_config_changed_by_barber_id(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_config_changed_by_barber_id() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: barberd_config_changed_by_service_id(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_config_changed_by_service_id() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: barberd_reservations_bookings_version_delete(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_reservations_bookings_version_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM old_rows);
				RETURN NULL;
			END $$;


--
-- Name: barberd_reservations_bookings_version_insert(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_reservations_bookings_version_insert() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM new_rows);
				RETURN NULL;
			END $$;


--
-- Name: barberd_reservations_bookings_version_update(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.barberd_reservations_bookings_version_update() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
			BEGIN
				UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (SELECT barber_id FROM old_rows UNION SELECT barber_id FROM new_rows);
				RETURN NULL;
			END $$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.accounts (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    config_version bigint DEFAULT 0 NOT NULL
);


--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    prefix character varying NOT NULL,
    secret_hash character varying NOT NULL,
    scopes jsonb NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    account_id character varying NOT NULL
);


--
-- Name: appointments; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.appointments (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    client_name character varying NOT NULL,
    client_phone character varying NOT NULL,
    client_email character varying,
    external_reference character varying,
    status character varying DEFAULT 'confirmed'::character varying NOT NULL,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    source character varying DEFAULT 'api'::character varying NOT NULL,
    cancelled_at timestamp with time zone,
    cancellation_reason character varying,
    reminded_at timestamp with time zone,
    version bigint DEFAULT 1 NOT NULL,
    account_id character varying NOT NULL,
    unit_id character varying NOT NULL,
    service_id character varying NOT NULL,
    barber_id character varying NOT NULL,
    customer_id character varying NOT NULL,
    api_key_id character varying NOT NULL,
    hold_id character varying
);


--
-- Name: barber_services; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.barber_services (
    barber_id character varying NOT NULL,
    service_id character varying NOT NULL
);


--
-- Name: barbers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.barbers (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    active boolean DEFAULT true NOT NULL,
    bookings_version bigint DEFAULT 0 NOT NULL,
    account_id character varying NOT NULL
);


--
-- Name: customers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.customers (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    phone character varying NOT NULL,
    email character varying,
    account_id character varying NOT NULL
);


--
-- Name: deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deliveries (
    id character varying NOT NULL,
    delivered_at timestamp with time zone,
    account_id character varying NOT NULL,
    api_key_id character varying NOT NULL,
    notification_id character varying NOT NULL
);


--
-- Name: holds; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.holds (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    status character varying DEFAULT 'active'::character varying NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    account_id character varying NOT NULL,
    unit_id character varying NOT NULL,
    service_id character varying NOT NULL,
    barber_id character varying NOT NULL,
    api_key_id character varying NOT NULL
);


--
-- Name: notifications; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notifications (
    id character varying NOT NULL,
    type character varying NOT NULL,
    source character varying NOT NULL,
    appointment jsonb NOT NULL,
    previous_starts_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    account_id character varying NOT NULL,
    appointment_id character varying NOT NULL
);


--
-- Name: reservations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reservations (
    id character varying NOT NULL,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    account_id character varying NOT NULL,
    barber_id character varying NOT NULL,
    hold_id character varying,
    appointment_id character varying
);


--
-- Name: services; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.services (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    description character varying DEFAULT ''::character varying NOT NULL,
    duration_minutes bigint NOT NULL,
    buffer_minutes bigint DEFAULT 0 NOT NULL,
    price_amount bigint NOT NULL,
    price_currency character varying NOT NULL,
    active boolean DEFAULT true NOT NULL,
    bookable_online boolean DEFAULT true NOT NULL,
    account_id character varying NOT NULL
);


--
-- Name: time_offs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.time_offs (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    starts_at timestamp with time zone NOT NULL,
    ends_at timestamp with time zone NOT NULL,
    reason character varying DEFAULT ''::character varying NOT NULL,
    barber_id character varying NOT NULL,
    account_id character varying NOT NULL
);


--
-- Name: unit_barbers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.unit_barbers (
    unit_id character varying NOT NULL,
    barber_id character varying NOT NULL
);


--
-- Name: unit_services; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.unit_services (
    unit_id character varying NOT NULL,
    service_id character varying NOT NULL
);


--
-- Name: units; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.units (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    name character varying NOT NULL,
    timezone character varying NOT NULL,
    address character varying DEFAULT ''::character varying NOT NULL,
    phone character varying DEFAULT ''::character varying NOT NULL,
    active boolean DEFAULT true NOT NULL,
    slot_step_minutes bigint DEFAULT 15 NOT NULL,
    min_lead_minutes bigint DEFAULT 60 NOT NULL,
    horizon_days bigint DEFAULT 365 NOT NULL,
    account_id character varying NOT NULL
);


--
-- Name: webhook_attempts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_attempts (
    id character varying NOT NULL,
    attempted_at timestamp with time zone NOT NULL,
    status_code bigint,
    latency_ms bigint NOT NULL,
    error character varying DEFAULT ''::character varying NOT NULL,
    account_id character varying NOT NULL,
    delivery_id character varying NOT NULL
);


--
-- Name: webhook_deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_deliveries (
    id character varying NOT NULL,
    status character varying DEFAULT 'pending'::character varying NOT NULL,
    attempt_count bigint DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    retry_since timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    delivered_at timestamp with time zone,
    account_id character varying NOT NULL,
    notification_id character varying NOT NULL,
    endpoint_id character varying NOT NULL
);


--
-- Name: webhook_endpoints; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_endpoints (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    url character varying NOT NULL,
    description character varying DEFAULT ''::character varying NOT NULL,
    event_types jsonb NOT NULL,
    enabled boolean DEFAULT true NOT NULL,
    secret character varying NOT NULL,
    failing_since timestamp with time zone,
    leased_until timestamp with time zone,
    lease_token character varying DEFAULT ''::character varying NOT NULL,
    account_id character varying NOT NULL
);


--
-- Name: working_hours; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.working_hours (
    id character varying NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    weekday bigint NOT NULL,
    opens_at character varying NOT NULL,
    closes_at character varying NOT NULL,
    breaks jsonb,
    barber_id character varying NOT NULL,
    account_id character varying NOT NULL,
    unit_id character varying NOT NULL
);


--
-- Data for Name: accounts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.accounts VALUES ('acc_01m880qzbs54817f2ghn55gftf', '2026-11-25 00:12:30.969201+00', '2026-11-25 00:12:30.969203+00', 'Demo Barbershop', 88);


--
-- Data for Name: api_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.api_keys VALUES ('key_01m880qzfe5mp4swa2yqb5924m', '2026-11-25 00:12:31.08677+00', '2026-11-25 00:12:31.086771+00', 'Demo chatbot', 'bk_u62ptqff', '60b685962063b8b478610e49b4f15f9eaa052e1c33093bdbb9f70903acba284c', '["appointments:read", "appointments:write", "availability:read", "catalog:read", "context:read", "holds:write", "notifications:read"]', NULL, NULL, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.api_keys VALUES ('key_01m880qzfwf68erg1qk1pw743k', '2026-11-25 00:12:31.100443+00', '2026-11-25 00:12:31.100444+00', 'Demo dashboard', 'bk_lju4vmms', '7678bfd643d665d25af22a6e004eaa2ba4dea72475537b645d77984cbf9f78ee', '["admin", "appointments:read", "appointments:write", "availability:read", "catalog:read", "context:read", "holds:write", "notifications:read"]', NULL, NULL, 'acc_01m880qzbs54817f2ghn55gftf');


--
-- Data for Name: appointments; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: barber_services; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.barber_services VALUES ('brb_01m880qzc2pcq7339qhccytjaw', 'svc_01m880qzbxhxm2ng2tpndat6pe');
INSERT INTO public.barber_services VALUES ('brb_01m880qzc2pcq7339qhccytjaw', 'svc_01m880qzbybn5hrmp0cx9b77rw');
INSERT INTO public.barber_services VALUES ('brb_01m880qzc2pcq7339qhccytjaw', 'svc_01m880qzbzwggwcnjgz8jqh06y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzc2pcq7339qhccytjaw', 'svc_01m880qzbzwggwcnjgza32we0y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzc2pcq7339qhccytjaw', 'svc_01m880qzc16g01fsza3f0mkz71');
INSERT INTO public.barber_services VALUES ('brb_01m880qzcqm57bsg98cwzrrp11', 'svc_01m880qzbzwggwcnjgz8jqh06y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzcqm57bsg98cwzrrp11', 'svc_01m880qzbzwggwcnjgza32we0y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzcqm57bsg98cwzrrp11', 'svc_01m880qzc16g01fsza3f0mkz71');
INSERT INTO public.barber_services VALUES ('brb_01m880qzcqm57bsg98cwzrrp11', 'svc_01m880qzbxhxm2ng2tpndat6pe');
INSERT INTO public.barber_services VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', 'svc_01m880qzbxhxm2ng2tpndat6pe');
INSERT INTO public.barber_services VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', 'svc_01m880qzbybn5hrmp0cx9b77rw');
INSERT INTO public.barber_services VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', 'svc_01m880qzbzwggwcnjgz8jqh06y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', 'svc_01m880qzbzwggwcnjgza32we0y');
INSERT INTO public.barber_services VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', 'svc_01m880qzc16g01fsza3f0mkz71');
INSERT INTO public.barber_services VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', 'svc_01m880qzds0h9ry6z87s4hf9wr');
INSERT INTO public.barber_services VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', 'svc_01m880qzdt0vcr320yvbhw4zt4');
INSERT INTO public.barber_services VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', 'svc_01m880qzdt0vcr320yvetd95jn');
INSERT INTO public.barber_services VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', 'svc_01m880qzdvrbeawhetr6ckm25x');
INSERT INTO public.barber_services VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', 'svc_01m880qzdye540a9xcywxd4gxr');
INSERT INTO public.barber_services VALUES ('brb_01m880qzec3f25av80yg4638a3', 'svc_01m880qzds0h9ry6z87s4hf9wr');
INSERT INTO public.barber_services VALUES ('brb_01m880qzec3f25av80yg4638a3', 'svc_01m880qzdt0vcr320yvbhw4zt4');
INSERT INTO public.barber_services VALUES ('brb_01m880qzec3f25av80yg4638a3', 'svc_01m880qzdvrbeawhetr6ckm25x');
INSERT INTO public.barber_services VALUES ('brb_01m880qzec3f25av80yg4638a3', 'svc_01m880qzdye540a9xcywxd4gxr');
INSERT INTO public.barber_services VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', 'svc_01m880qzds0h9ry6z87s4hf9wr');
INSERT INTO public.barber_services VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', 'svc_01m880qzdt0vcr320yvbhw4zt4');
INSERT INTO public.barber_services VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', 'svc_01m880qzdt0vcr320yvetd95jn');
INSERT INTO public.barber_services VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', 'svc_01m880qzdvrbeawhetr6ckm25x');
INSERT INTO public.barber_services VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', 'svc_01m880qzdye540a9xcywxd4gxr');


--
-- Data for Name: barbers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.barbers VALUES ('brb_01m880qzc2pcq7339qhccytjaw', '2026-11-25 00:12:30.97895+00', '2026-11-25 00:12:30.978951+00', 'Rafael Souza', true, 0, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.barbers VALUES ('brb_01m880qzcqm57bsg98cwzrrp11', '2026-11-25 00:12:30.99918+00', '2026-11-25 00:12:30.99918+00', 'Bruno Lima', true, 0, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.barbers VALUES ('brb_01m880qzd9c2fjj93qwtn0gppm', '2026-11-25 00:12:31.017515+00', '2026-11-25 00:12:31.017516+00', 'Carlos Mendes', false, 0, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.barbers VALUES ('brb_01m880qze5kzf2x6dtq1fcmye7', '2026-11-25 00:12:31.045296+00', '2026-11-25 00:12:31.045297+00', 'João Silva', true, 0, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.barbers VALUES ('brb_01m880qzec3f25av80yg4638a3', '2026-11-25 00:12:31.052249+00', '2026-11-25 00:12:31.052249+00', 'Miguel Costa', true, 0, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.barbers VALUES ('brb_01m880qzese1wfdz0mxwk24z0z', '2026-11-25 00:12:31.065848+00', '2026-11-25 00:12:31.065849+00', 'Pedro Santos', false, 0, 'acc_01m880qzbs54817f2ghn55gftf');


--
-- Data for Name: customers; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: holds; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: notifications; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: reservations; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: services; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.services VALUES ('svc_01m880qzbxhxm2ng2tpndat6pe', '2026-11-25 00:12:30.973136+00', '2026-11-25 00:12:30.973137+00', 'Corte de cabelo', 'Corte clássico ou moderno, com lavagem.', 30, 0, 6000, 'BRL', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzbybn5hrmp0cx9b77rw', '2026-11-25 00:12:30.974441+00', '2026-11-25 00:12:30.974441+00', 'Barba completa', 'Barba com toalha quente e navalha.', 45, 0, 4500, 'BRL', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzbzwggwcnjgz8jqh06y', '2026-11-25 00:12:30.975148+00', '2026-11-25 00:12:30.975149+00', 'Corte e barba', 'Corte de cabelo e barba completa.', 60, 0, 9500, 'BRL', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzbzwggwcnjgza32we0y', '2026-11-25 00:12:30.975942+00', '2026-11-25 00:12:30.975942+00', 'Pigmentação', 'Pigmentação de barba (temporariamente indisponível).', 40, 0, 5000, 'BRL', false, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzc16g01fsza3f0mkz71', '2026-11-25 00:12:30.977257+00', '2026-11-25 00:12:30.977257+00', 'Dia do noivo', 'Pacote completo para noivos; agende por telefone.', 120, 0, 30000, 'BRL', true, false, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzds0h9ry6z87s4hf9wr', '2026-11-25 00:12:31.033591+00', '2026-11-25 00:12:31.033591+00', 'Haircut', 'Classic or modern cut, wash included.', 30, 0, 2500, 'EUR', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzdt0vcr320yvbhw4zt4', '2026-11-25 00:12:31.034188+00', '2026-11-25 00:12:31.034189+00', 'Beard trim', 'Beard shaping with hot towel.', 45, 0, 1800, 'EUR', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzdt0vcr320yvetd95jn', '2026-11-25 00:12:31.034608+00', '2026-11-25 00:12:31.034609+00', 'Haircut and beard', 'Haircut plus full beard service.', 60, 0, 3800, 'EUR', true, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzdvrbeawhetr6ckm25x', '2026-11-25 00:12:31.035045+00', '2026-11-25 00:12:31.035055+00', 'Hot towel shave', 'Traditional straight-razor shave (currently unavailable).', 40, 0, 2200, 'EUR', false, true, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.services VALUES ('svc_01m880qzdye540a9xcywxd4gxr', '2026-11-25 00:12:31.038651+00', '2026-11-25 00:12:31.038652+00', 'Wedding package', 'Full grooming for the big day; book by phone.', 120, 0, 12000, 'EUR', true, false, 'acc_01m880qzbs54817f2ghn55gftf');


--
-- Data for Name: time_offs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: unit_barbers; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.unit_barbers VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'brb_01m880qzc2pcq7339qhccytjaw');
INSERT INTO public.unit_barbers VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'brb_01m880qzcqm57bsg98cwzrrp11');
INSERT INTO public.unit_barbers VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'brb_01m880qzd9c2fjj93qwtn0gppm');
INSERT INTO public.unit_barbers VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'brb_01m880qze5kzf2x6dtq1fcmye7');
INSERT INTO public.unit_barbers VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'brb_01m880qzec3f25av80yg4638a3');
INSERT INTO public.unit_barbers VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'brb_01m880qzese1wfdz0mxwk24z0z');


--
-- Data for Name: unit_services; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.unit_services VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'svc_01m880qzbxhxm2ng2tpndat6pe');
INSERT INTO public.unit_services VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'svc_01m880qzbybn5hrmp0cx9b77rw');
INSERT INTO public.unit_services VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'svc_01m880qzbzwggwcnjgz8jqh06y');
INSERT INTO public.unit_services VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'svc_01m880qzbzwggwcnjgza32we0y');
INSERT INTO public.unit_services VALUES ('unt_01m880qzbtv7prydk9s163fv4c', 'svc_01m880qzc16g01fsza3f0mkz71');
INSERT INTO public.unit_services VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'svc_01m880qzds0h9ry6z87s4hf9wr');
INSERT INTO public.unit_services VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'svc_01m880qzdt0vcr320yvbhw4zt4');
INSERT INTO public.unit_services VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'svc_01m880qzdt0vcr320yvetd95jn');
INSERT INTO public.unit_services VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'svc_01m880qzdvrbeawhetr6ckm25x');
INSERT INTO public.unit_services VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', 'svc_01m880qzdye540a9xcywxd4gxr');


--
-- Data for Name: units; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.units VALUES ('unt_01m880qzbtv7prydk9s163fv4c', '2026-11-25 00:12:30.970158+00', '2026-11-25 00:12:30.970159+00', 'Barbearia Paulista', 'America/Sao_Paulo', 'Avenida Paulista 1578, São Paulo - SP, 01310-200', '+551132000000', true, 15, 60, 365, 'acc_01m880qzbs54817f2ghn55gftf');
INSERT INTO public.units VALUES ('unt_01m880qzds0h9ry6z87r7w67tz', '2026-11-25 00:12:31.033177+00', '2026-11-25 00:12:31.033179+00', 'Barbearia Chiado', 'Europe/Lisbon', 'Rua Garrett 50, 1200-204 Lisboa', '+351213000000', true, 15, 60, 365, 'acc_01m880qzbs54817f2ghn55gftf');


--
-- Data for Name: webhook_attempts; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_endpoints; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: working_hours; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.working_hours VALUES ('whr_01m880qzcatfv7bchyyxjf3yyk', '2026-11-25 00:12:30.986482+00', '2026-11-25 00:12:30.986483+00', 6, '09:00', '14:00', 'null', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzcb0938ytyvtnmvc9zn', '2026-11-25 00:12:30.987975+00', '2026-11-25 00:12:30.987975+00', 1, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzcfjtzj1cq44bmnnp5b', '2026-11-25 00:12:30.991343+00', '2026-11-25 00:12:30.991344+00', 2, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzchzdvqmhdes2cmcsj3', '2026-11-25 00:12:30.993514+00', '2026-11-25 00:12:30.993515+00', 3, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzck71p1g7djy86etkbg', '2026-11-25 00:12:30.99537+00', '2026-11-25 00:12:30.99537+00', 4, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzcpajn1nd7g17ky7pez', '2026-11-25 00:12:30.998498+00', '2026-11-25 00:12:30.998499+00', 5, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzc2pcq7339qhccytjaw', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzctrfwqw15b6a63c4af', '2026-11-25 00:12:31.002925+00', '2026-11-25 00:12:31.002925+00', 6, '09:00', '14:00', 'null', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzczdhrb0d3x4b6wzz54', '2026-11-25 00:12:31.00748+00', '2026-11-25 00:12:31.007482+00', 1, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzd1yz3z7n2mpcrsyptr', '2026-11-25 00:12:31.009253+00', '2026-11-25 00:12:31.009253+00', 2, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzd8hysdeaat8mcwztkb', '2026-11-25 00:12:31.016379+00', '2026-11-25 00:12:31.01638+00', 3, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzd8hysdeaat8p0sca4y', '2026-11-25 00:12:31.016858+00', '2026-11-25 00:12:31.016859+00', 4, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qzd9c2fjj93qwqesc7rs', '2026-11-25 00:12:31.017211+00', '2026-11-25 00:12:31.017212+00', 5, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzcqm57bsg98cwzrrp11', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzbtv7prydk9s163fv4c');
INSERT INTO public.working_hours VALUES ('whr_01m880qze6meaq372b5ks069pa', '2026-11-25 00:12:31.046351+00', '2026-11-25 00:12:31.046351+00', 1, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qze6meaq372b5nk4r58t', '2026-11-25 00:12:31.04666+00', '2026-11-25 00:12:31.04666+00', 2, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qze6meaq372b5rxq6wbd', '2026-11-25 00:12:31.04689+00', '2026-11-25 00:12:31.04689+00', 3, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qze9a7c266s3qvc2e56j', '2026-11-25 00:12:31.049271+00', '2026-11-25 00:12:31.049271+00', 4, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qze9a7c266s3qyqc3mvp', '2026-11-25 00:12:31.049504+00', '2026-11-25 00:12:31.049505+00', 5, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzec3f25av80ycj25jf3', '2026-11-25 00:12:31.052005+00', '2026-11-25 00:12:31.052005+00', 6, '09:00', '14:00', 'null', 'brb_01m880qze5kzf2x6dtq1fcmye7', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzeex55qgs0jrgp0hcyf', '2026-11-25 00:12:31.054556+00', '2026-11-25 00:12:31.054557+00', 3, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzefywxdjd15n2na4sgt', '2026-11-25 00:12:31.055961+00', '2026-11-25 00:12:31.055961+00', 4, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzejgtban6hgrd1jrces', '2026-11-25 00:12:31.058635+00', '2026-11-25 00:12:31.058636+00', 5, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzejgtban6hgrddd26gh', '2026-11-25 00:12:31.058875+00', '2026-11-25 00:12:31.058875+00', 6, '09:00', '14:00', 'null', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzese1wfdz0mxvr4q9q3', '2026-11-25 00:12:31.065173+00', '2026-11-25 00:12:31.065175+00', 1, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');
INSERT INTO public.working_hours VALUES ('whr_01m880qzese1wfdz0mxwh6eaca', '2026-11-25 00:12:31.065508+00', '2026-11-25 00:12:31.065508+00', 2, '09:00', '19:00', '["12:00-13:00"]', 'brb_01m880qzec3f25av80yg4638a3', 'acc_01m880qzbs54817f2ghn55gftf', 'unt_01m880qzds0h9ry6z87r7w67tz');


--
-- Name: accounts accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: appointments appointments_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_pkey PRIMARY KEY (id);


--
-- Name: barber_services barber_services_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.barber_services
    ADD CONSTRAINT barber_services_pkey PRIMARY KEY (barber_id, service_id);


--
-- Name: barbers barbers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.barbers
    ADD CONSTRAINT barbers_pkey PRIMARY KEY (id);


--
-- Name: customers customers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (id);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);


--
-- Name: holds holds_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_pkey PRIMARY KEY (id);


--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);


--
-- Name: reservations reservations_no_overlap; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_no_overlap EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)'::text) WITH &&);


--
-- Name: reservations reservations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_pkey PRIMARY KEY (id);


--
-- Name: services services_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.services
    ADD CONSTRAINT services_pkey PRIMARY KEY (id);


--
-- Name: time_offs time_offs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.time_offs
    ADD CONSTRAINT time_offs_pkey PRIMARY KEY (id);


--
-- Name: unit_barbers unit_barbers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_barbers
    ADD CONSTRAINT unit_barbers_pkey PRIMARY KEY (unit_id, barber_id);


--
-- Name: unit_services unit_services_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_services
    ADD CONSTRAINT unit_services_pkey PRIMARY KEY (unit_id, service_id);


--
-- Name: units units_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.units
    ADD CONSTRAINT units_pkey PRIMARY KEY (id);


--
-- Name: webhook_attempts webhook_attempts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id);


--
-- Name: webhook_deliveries webhook_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);


--
-- Name: webhook_endpoints webhook_endpoints_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);


--
-- Name: working_hours working_hours_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.working_hours
    ADD CONSTRAINT working_hours_pkey PRIMARY KEY (id);


--
-- Name: apikey_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX apikey_account_id ON public.api_keys USING btree (account_id);


--
-- Name: apikey_secret_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX apikey_secret_hash ON public.api_keys USING btree (secret_hash);


--
-- Name: appointment_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX appointment_account_id ON public.appointments USING btree (account_id);


--
-- Name: appointment_account_id_client_phone_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX appointment_account_id_client_phone_starts_at ON public.appointments USING btree (account_id, client_phone, starts_at);


--
-- Name: appointment_account_id_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX appointment_account_id_starts_at ON public.appointments USING btree (account_id, starts_at);


--
-- Name: appointment_api_key_id_external_reference; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX appointment_api_key_id_external_reference ON public.appointments USING btree (api_key_id, external_reference);


--
-- Name: appointment_barber_id_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX appointment_barber_id_starts_at ON public.appointments USING btree (barber_id, starts_at);


--
-- Name: appointment_status_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX appointment_status_starts_at ON public.appointments USING btree (status, starts_at);


--
-- Name: barber_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX barber_account_id ON public.barbers USING btree (account_id);


--
-- Name: customer_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX customer_account_id ON public.customers USING btree (account_id);


--
-- Name: customer_account_id_phone; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX customer_account_id_phone ON public.customers USING btree (account_id, phone);


--
-- Name: delivery_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_account_id ON public.deliveries USING btree (account_id);


--
-- Name: delivery_api_key_id_notification_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX delivery_api_key_id_notification_id ON public.deliveries USING btree (api_key_id, notification_id);


--
-- Name: delivery_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_pending ON public.deliveries USING btree (api_key_id, notification_id) WHERE (delivered_at IS NULL);


--
-- Name: hold_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hold_account_id ON public.holds USING btree (account_id);


--
-- Name: hold_api_key_id_status_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hold_api_key_id_status_expires_at ON public.holds USING btree (api_key_id, status, expires_at);


--
-- Name: hold_barber_id_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hold_barber_id_starts_at ON public.holds USING btree (barber_id, starts_at);


--
-- Name: hold_status_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hold_status_expires_at ON public.holds USING btree (status, expires_at);


--
-- Name: notification_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_account_id ON public.notifications USING btree (account_id);


--
-- Name: notification_account_id_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_account_id_created_at ON public.notifications USING btree (account_id, created_at);


--
-- Name: reservation_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reservation_account_id ON public.reservations USING btree (account_id);


--
-- Name: reservation_appointment_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX reservation_appointment_id ON public.reservations USING btree (appointment_id);


--
-- Name: reservation_barber_id_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reservation_barber_id_starts_at ON public.reservations USING btree (barber_id, starts_at);


--
-- Name: reservation_hold_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX reservation_hold_id ON public.reservations USING btree (hold_id);


--
-- Name: service_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX service_account_id ON public.services USING btree (account_id);


--
-- Name: timeoff_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX timeoff_account_id ON public.time_offs USING btree (account_id);


--
-- Name: timeoff_barber_id_starts_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX timeoff_barber_id_starts_at ON public.time_offs USING btree (barber_id, starts_at);


--
-- Name: unit_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX unit_account_id ON public.units USING btree (account_id);


--
-- Name: webhookattempt_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookattempt_account_id ON public.webhook_attempts USING btree (account_id);


--
-- Name: webhookattempt_delivery_id_attempted_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookattempt_delivery_id_attempted_at ON public.webhook_attempts USING btree (delivery_id, attempted_at);


--
-- Name: webhookdelivery_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookdelivery_account_id ON public.webhook_deliveries USING btree (account_id);


--
-- Name: webhookdelivery_endpoint_id_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookdelivery_endpoint_id_created_at ON public.webhook_deliveries USING btree (endpoint_id, created_at);


--
-- Name: webhookdelivery_status_next_attempt_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookdelivery_status_next_attempt_at ON public.webhook_deliveries USING btree (status, next_attempt_at);


--
-- Name: webhookendpoint_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhookendpoint_account_id ON public.webhook_endpoints USING btree (account_id);


--
-- Name: workinghours_account_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workinghours_account_id ON public.working_hours USING btree (account_id);


--
-- Name: workinghours_barber_id_unit_id_weekday; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX workinghours_barber_id_unit_id_weekday ON public.working_hours USING btree (barber_id, unit_id, weekday);


--
-- Name: api_keys api_keys_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_keys_config_version AFTER INSERT OR DELETE ON public.api_keys FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: api_keys api_keys_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER api_keys_config_version_update AFTER UPDATE ON public.api_keys FOR EACH ROW WHEN ((((old.name)::text IS DISTINCT FROM (new.name)::text) OR (old.scopes IS DISTINCT FROM new.scopes) OR (old.revoked_at IS DISTINCT FROM new.revoked_at))) EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: barber_services barber_services_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER barber_services_config_version AFTER INSERT OR DELETE OR UPDATE ON public.barber_services FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed_by_barber_id();


--
-- Name: barbers barbers_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER barbers_config_version AFTER INSERT OR DELETE ON public.barbers FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: barbers barbers_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER barbers_config_version_update AFTER UPDATE ON public.barbers FOR EACH ROW WHEN ((old.bookings_version = new.bookings_version)) EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: reservations reservations_bookings_version_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reservations_bookings_version_delete AFTER DELETE ON public.reservations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION public.barberd_reservations_bookings_version_delete();


--
-- Name: reservations reservations_bookings_version_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reservations_bookings_version_insert AFTER INSERT ON public.reservations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.barberd_reservations_bookings_version_insert();


--
-- Name: reservations reservations_bookings_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER reservations_bookings_version_update AFTER UPDATE ON public.reservations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.barberd_reservations_bookings_version_update();


--
-- Name: services services_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER services_config_version AFTER INSERT OR DELETE ON public.services FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: services services_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER services_config_version_update AFTER UPDATE ON public.services FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: time_offs time_offs_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER time_offs_config_version AFTER INSERT OR DELETE ON public.time_offs FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: time_offs time_offs_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER time_offs_config_version_update AFTER UPDATE ON public.time_offs FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: unit_barbers unit_barbers_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER unit_barbers_config_version AFTER INSERT OR DELETE OR UPDATE ON public.unit_barbers FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed_by_barber_id();


--
-- Name: unit_services unit_services_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER unit_services_config_version AFTER INSERT OR DELETE OR UPDATE ON public.unit_services FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed_by_service_id();


--
-- Name: units units_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER units_config_version AFTER INSERT OR DELETE ON public.units FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: units units_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER units_config_version_update AFTER UPDATE ON public.units FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: working_hours working_hours_config_version; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER working_hours_config_version AFTER INSERT OR DELETE ON public.working_hours FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: working_hours working_hours_config_version_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER working_hours_config_version_update AFTER UPDATE ON public.working_hours FOR EACH ROW EXECUTE FUNCTION public.barberd_config_changed();


--
-- Name: api_keys api_keys_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: appointments appointments_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: appointments appointments_api_keys_api_key; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_api_keys_api_key FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id);


--
-- Name: appointments appointments_barbers_barber; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_barbers_barber FOREIGN KEY (barber_id) REFERENCES public.barbers(id);


--
-- Name: appointments appointments_customers_customer; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_customers_customer FOREIGN KEY (customer_id) REFERENCES public.customers(id);


--
-- Name: appointments appointments_holds_hold; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_holds_hold FOREIGN KEY (hold_id) REFERENCES public.holds(id) ON DELETE SET NULL;


--
-- Name: appointments appointments_services_service; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_services_service FOREIGN KEY (service_id) REFERENCES public.services(id);


--
-- Name: appointments appointments_units_unit; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.appointments
    ADD CONSTRAINT appointments_units_unit FOREIGN KEY (unit_id) REFERENCES public.units(id);


--
-- Name: barber_services barber_services_barber_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.barber_services
    ADD CONSTRAINT barber_services_barber_id FOREIGN KEY (barber_id) REFERENCES public.barbers(id) ON DELETE CASCADE;


--
-- Name: barber_services barber_services_service_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.barber_services
    ADD CONSTRAINT barber_services_service_id FOREIGN KEY (service_id) REFERENCES public.services(id) ON DELETE CASCADE;


--
-- Name: barbers barbers_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.barbers
    ADD CONSTRAINT barbers_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: customers customers_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: deliveries deliveries_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: deliveries deliveries_api_keys_api_key; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_api_keys_api_key FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id);


--
-- Name: deliveries deliveries_notifications_notification; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_notifications_notification FOREIGN KEY (notification_id) REFERENCES public.notifications(id);


--
-- Name: holds holds_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: holds holds_api_keys_api_key; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_api_keys_api_key FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id);


--
-- Name: holds holds_barbers_barber; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_barbers_barber FOREIGN KEY (barber_id) REFERENCES public.barbers(id);


--
-- Name: holds holds_services_service; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_services_service FOREIGN KEY (service_id) REFERENCES public.services(id);


--
-- Name: holds holds_units_unit; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.holds
    ADD CONSTRAINT holds_units_unit FOREIGN KEY (unit_id) REFERENCES public.units(id);


--
-- Name: notifications notifications_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: notifications notifications_appointments_subject; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_appointments_subject FOREIGN KEY (appointment_id) REFERENCES public.appointments(id);


--
-- Name: reservations reservations_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: reservations reservations_appointments_appointment; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_appointments_appointment FOREIGN KEY (appointment_id) REFERENCES public.appointments(id) ON DELETE SET NULL;


--
-- Name: reservations reservations_barbers_barber; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_barbers_barber FOREIGN KEY (barber_id) REFERENCES public.barbers(id);


--
-- Name: reservations reservations_holds_hold; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reservations
    ADD CONSTRAINT reservations_holds_hold FOREIGN KEY (hold_id) REFERENCES public.holds(id) ON DELETE SET NULL;


--
-- Name: services services_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.services
    ADD CONSTRAINT services_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: time_offs time_offs_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.time_offs
    ADD CONSTRAINT time_offs_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: time_offs time_offs_barbers_time_off; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.time_offs
    ADD CONSTRAINT time_offs_barbers_time_off FOREIGN KEY (barber_id) REFERENCES public.barbers(id);


--
-- Name: unit_barbers unit_barbers_barber_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_barbers
    ADD CONSTRAINT unit_barbers_barber_id FOREIGN KEY (barber_id) REFERENCES public.barbers(id) ON DELETE CASCADE;


--
-- Name: unit_barbers unit_barbers_unit_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_barbers
    ADD CONSTRAINT unit_barbers_unit_id FOREIGN KEY (unit_id) REFERENCES public.units(id) ON DELETE CASCADE;


--
-- Name: unit_services unit_services_service_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_services
    ADD CONSTRAINT unit_services_service_id FOREIGN KEY (service_id) REFERENCES public.services(id) ON DELETE CASCADE;


--
-- Name: unit_services unit_services_unit_id; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.unit_services
    ADD CONSTRAINT unit_services_unit_id FOREIGN KEY (unit_id) REFERENCES public.units(id) ON DELETE CASCADE;


--
-- Name: units units_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.units
    ADD CONSTRAINT units_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: webhook_attempts webhook_attempts_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: webhook_attempts webhook_attempts_webhook_deliveries_attempts; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_webhook_deliveries_attempts FOREIGN KEY (delivery_id) REFERENCES public.webhook_deliveries(id) ON DELETE CASCADE;


--
-- Name: webhook_deliveries webhook_deliveries_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: webhook_deliveries webhook_deliveries_notifications_notification; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_notifications_notification FOREIGN KEY (notification_id) REFERENCES public.notifications(id);


--
-- Name: webhook_deliveries webhook_deliveries_webhook_endpoints_deliveries; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_webhook_endpoints_deliveries FOREIGN KEY (endpoint_id) REFERENCES public.webhook_endpoints(id) ON DELETE CASCADE;


--
-- Name: webhook_endpoints webhook_endpoints_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_endpoints
    ADD CONSTRAINT webhook_endpoints_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: working_hours working_hours_accounts_account; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.working_hours
    ADD CONSTRAINT working_hours_accounts_account FOREIGN KEY (account_id) REFERENCES public.accounts(id);


--
-- Name: working_hours working_hours_barbers_working_hours; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.working_hours
    ADD CONSTRAINT working_hours_barbers_working_hours FOREIGN KEY (barber_id) REFERENCES public.barbers(id);


--
-- Name: working_hours working_hours_units_unit; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.working_hours
    ADD CONSTRAINT working_hours_units_unit FOREIGN KEY (unit_id) REFERENCES public.units(id);


--
-- PostgreSQL database dump complete
--


