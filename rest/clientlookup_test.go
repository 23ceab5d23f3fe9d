package rest_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/rest/view"
)

// clBook books with key at a demo unit (lisbon or saoPaulo) with the
// barber named, for phone, with an external reference unless ref is "",
// and returns the appointment's id.
func (e *env) clBook(key, unitName, startsAt, barberName, phone, ref string) string {
	e.t.Helper()
	svc := haircut
	if unitName == saoPaulo {
		svc = corte
	}
	body := map[string]any{
		"unit_id": e.unit(unitName), "service_id": e.service(svc), "barber_id": e.barber(barberName),
		"starts_at": startsAt, "client": map[string]any{"name": clientName, "phone": phone},
	}
	if ref != "" {
		body["external_reference"] = ref
	}
	r := e.do("POST", "/appointments", key, body)
	expect(e.t, r, http.StatusCreated, "")
	return apView(e.t, r).ID
}

// clMove moves an appointment, directly in the database, to start at wall
// time at in zone: as if its shop had been open then, which the lookup
// does not care about.
func (e *env) clMove(id, zone, at string) {
	e.t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		e.t.Fatal(err)
	}
	start, err := time.ParseInLocation("2006-01-02T15:04:05", at, loc)
	if err != nil {
		e.t.Fatal(err)
	}
	start = start.UTC() // as barberd stores instants
	a := e.appointment(id)
	if err := e.db.Appointment.UpdateOneID(id).SetStartsAt(start).SetEndsAt(start.Add(a.EndsAt.Sub(a.StartsAt))).Exec(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// clFind GETs /appointments with the query and key, expects 200 and
// returns the appointments.
func (e *env) clFind(key, rawQuery string) []view.Appointment {
	e.t.Helper()
	r := e.do("GET", "/appointments?"+rawQuery, key, nil)
	expect(e.t, r, http.StatusOK, "")
	return dataOf[view.Appointment](e.t, r)
}

// dataOf decodes a v1 list, {"data": [...]}, whose data must be a list.
func dataOf[T any](t testing.TB, r *response) []T {
	t.Helper()
	var l struct {
		Data []T `json:"data"`
	}
	r.Decode(t, &l)
	if l.Data == nil {
		t.Fatalf("data is not a list: %s", r.Body)
	}
	return l.Data
}

func clIDs(as []view.Appointment) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

// clGraphQL asks appointmentsByClient what a REST query asks, and returns
// the ids found, or the fields of a validation_failed error. ok is false
// when GraphQL's types refuse the query before the resolver sees it (a
// status that is no AppointmentStatus, answered validation_failed without
// fields) or cannot express it (a limit that is not a number).
func clGraphQL(t *testing.T, gql func(string, map[string]any) *gqltest.Answer, q url.Values) (ids, fields []string, ok bool) {
	t.Helper()
	vars := map[string]any{}
	for name, v := range map[string]string{"client_phone": "clientPhone", "external_reference": "externalReference", "from": "from", "to": "to"} {
		if _, given := q[name]; given {
			vars[v] = q.Get(name)
		}
	}
	typed := true
	if _, given := q["status"]; given {
		status := []string{}
		for s := range strings.SplitSeq(q.Get("status"), ",") {
			if s != "" {
				status = append(status, s)
				typed = typed && slices.Contains([]string{"confirmed", "cancelled", "completed", "no_show"}, s)
			}
		}
		vars["status"] = status
	}
	if _, given := q["limit"]; given {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			return nil, nil, false
		}
		vars["limit"] = n
	}
	a := gql(`query($clientPhone: String, $externalReference: String, $status: [AppointmentStatus!], $from: String, $to: String, $limit: Int) {
		appointmentsByClient(clientPhone: $clientPhone, externalReference: $externalReference, status: $status, from: $from, to: $to, limit: $limit) { id } }`, vars)
	if len(a.Errors) > 0 {
		if a.Code() != domain.CodeValidationFailed {
			t.Fatalf("GraphQL %v: %s %s", vars, a.Code(), a.Messages())
		}
		return nil, a.Fields(), typed
	}
	if !typed {
		t.Fatalf("GraphQL took statuses %v", vars["status"])
	}
	for _, x := range a.OK(t)["appointmentsByClient"].([]any) {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	return ids, nil, true
}

// GET /appointments finds a client's appointments by phone across the
// account's keys, and a key's own by its reference, in any unit's zone;
// appointmentsByClient in GraphQL answers the same.
func TestClientAppointments(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		botA, botB := e.keys.APIKey, e.key(domain.BookingScopes...)
		// Monday 2027-03-01, 06:00 UTC: the shops have not opened yet.
		past := e.clBook(botA, lisbon, "2027-03-01T09:00:00", joao, validPhone, "")
		a1 := e.clBook(botA, lisbon, tuesdayAt11, joao, validPhone, "conv-1")
		a2 := e.clBook(botB, lisbon, tuesdayAt11, miguel, validPhone, "conv-1")
		// 09:00 in São Paulo is 12:00 UTC, after 11:00 in Lisbon (UTC).
		sp := e.clBook(botA, saoPaulo, "2027-03-02T09:00:00", rafael, validPhone, "")
		cancelled := e.clBook(botA, lisbon, "2027-03-04T10:00:00", joao, validPhone, "")
		expect(t, e.do("POST", "/appointments/"+cancelled+"/cancel", botA, map[string]any{"reason": "cannot come"}), http.StatusOK, "")
		e.clBook(botA, lisbon, "2027-03-02T14:00:00", joao, otherPhone, "")
		// Another account's client with the same phone, and reference.
		other := e.otherAccount()
		body := e.apOtherBooking(other, haircut, tuesdayAt11)
		body["external_reference"] = "conv-1"
		r := e.do("POST", "/appointments", other.APIKey, body)
		expect(t, r, http.StatusCreated, "")
		theirs := apView(t, r).ID

		// Days whose local date differs from the UTC one, and a DST change
		// (Lisbon goes from UTC+0 to UTC+1 at 01:00 on Sunday 2027-03-28).
		lateSP := e.clBook(botA, saoPaulo, "2027-03-09T10:00:00", rafael, validPhone, "")
		e.clMove(lateSP, "America/Sao_Paulo", "2027-03-09T22:30:00") // 2027-03-10 01:30 UTC
		earlyLisbon := e.clBook(botA, lisbon, "2027-03-10T10:00:00", joao, validPhone, "")
		e.clMove(earlyLisbon, "Europe/Lisbon", "2027-03-10T00:30:00") // 00:30 UTC
		beforeDST := e.clBook(botA, lisbon, "2027-03-26T10:00:00", joao, validPhone, "")
		e.clMove(beforeDST, "Europe/Lisbon", "2027-03-28T00:30:00") // 00:30 UTC
		afterDST := e.clBook(botA, lisbon, "2027-03-29T10:00:00", joao, validPhone, "")
		e.clMove(afterDST, "Europe/Lisbon", "2027-03-29T00:30:00") // 2027-03-28 23:30 UTC
		summer := e.clBook(botA, lisbon, "2027-04-07T10:00:00", joao, validPhone, "")
		e.clMove(summer, "Europe/Lisbon", "2027-04-07T00:30:00") // 2027-04-06 23:30 UTC

		e.clock.advance(4 * time.Hour) // 10:00 UTC: past has ended
		byID := func(ids ...string) []string { return slices.Sorted(slices.Values(ids)) }
		sameTime := byID(a1, a2)
		upcoming := append(slices.Clone(sameTime), sp, cancelled, earlyLisbon, lateSP, beforeDST, afterDST, summer)
		phone := "client_phone=%2B351912345678"

		cases := []struct {
			name, key, query string
			want             []string // ids, in order
			fields           []string // or the fields a 400 names
		}{
			{"not ended, by time then id, across units and keys", botA, phone, upcoming, nil},
			{"another key of the account finds the same", botB, phone, upcoming, nil},
			{"a + left unencoded reads as a space, and as +", botA, "client_phone=+351912345678", upcoming, nil},
			{"status", botA, phone + "&status=cancelled", []string{cancelled}, nil},
			{"statuses", botA, phone + "&status=cancelled,confirmed&limit=3", append(slices.Clone(sameTime), sp), nil},
			{"no appointment with the status", botA, phone + "&status=completed,no_show", []string{}, nil},
			{"limit", botA, phone + "&limit=1", sameTime[:1], nil},
			{"a day in São Paulo that is the next day in UTC", botA, phone + "&from=2027-03-09&to=2027-03-09", []string{lateSP}, nil},
			{"the day after in Lisbon", botA, phone + "&from=2027-03-10&to=2027-03-10", []string{earlyLisbon}, nil},
			{"from alone, by each unit's day", botA, phone + "&from=2027-03-10", []string{earlyLisbon, beforeDST, afterDST, summer}, nil},
			{"the day of the DST change", botA, phone + "&from=2027-03-28&to=2027-03-28", []string{beforeDST}, nil},
			{"the day after the DST change", botA, phone + "&from=2027-03-29&to=2027-03-29", []string{afterDST}, nil},
			{"a summer day in UTC is not its Lisbon day", botA, phone + "&from=2027-04-06&to=2027-04-06", []string{}, nil},
			{"to alone includes what has ended", botA, phone + "&to=2027-03-09", append(append([]string{past}, sameTime...), sp, cancelled, lateSP), nil},
			{"dates and status", botA, phone + "&from=2027-03-01&to=2027-03-04&status=confirmed", append(append([]string{past}, sameTime...), sp), nil},
			{"a phone nobody booked with", botA, "client_phone=%2B351999999999", []string{}, nil},
			{"no partial match", botA, "client_phone=%2B35191234567", []string{}, nil},
			{"the reference of key A", botA, "external_reference=conv-1", []string{a1}, nil},
			{"the same reference of key B", botB, "external_reference=conv-1", []string{a2}, nil},
			{"a reference the key never used", e.key(domain.ScopeAppointmentsRead), "external_reference=conv-1", []string{}, nil},
			{"the reference, with dates", botA, "external_reference=conv-1&from=2027-03-03", []string{}, nil},

			{"neither", botA, "status=confirmed", nil, []string{"client_phone", "external_reference"}},
			{"both", botA, phone + "&external_reference=conv-1", nil, []string{"client_phone", "external_reference"}},
			{"phone without +", botA, "client_phone=351912345678", nil, []string{"client_phone"}},
			{"phone too short", botA, "client_phone=%2B3519", nil, []string{"client_phone"}},
			{"phone with spaces", botA, "client_phone=%2B351+912+345+678", nil, []string{"client_phone"}},
			{"empty phone", botA, "client_phone=", nil, []string{"client_phone"}},
			{"empty reference", botA, "external_reference=", nil, []string{"external_reference"}},
			{"reference too long", botA, "external_reference=" + strings.Repeat("r", 256), nil, []string{"external_reference"}},
			{"unknown status", botA, phone + "&status=confirmed,pending", nil, []string{"status"}},
			{"no status", botA, phone + "&status=", nil, []string{"status"}},
			{"from not a date", botA, phone + "&from=2027-03-32", nil, []string{"from"}},
			{"to with a time", botA, phone + "&to=2027-03-02T10:00:00", nil, []string{"to"}},
			{"to before from", botA, phone + "&from=2027-03-02&to=2027-03-01", nil, []string{"to"}},
			{"limit 0", botA, phone + "&limit=0", nil, []string{"limit"}},
			{"limit 101", botA, phone + "&limit=101", nil, []string{"limit"}},
			{"limit not a number", botA, phone + "&limit=ten", nil, []string{"limit"}},
			{"every mistake at once", botA, "status=x&from=x&to=x&limit=0", nil, []string{"client_phone", "external_reference", "status", "from", "to", "limit"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := e.apOn(t)
				if c.fields != nil {
					expectFields(t, e.do("GET", "/appointments?"+c.query, c.key, nil), c.fields...)
				} else if got := clIDs(e.clFind(c.key, c.query)); !slices.Equal(got, c.want) {
					t.Errorf("found %v, want %v", got, c.want)
				}
				q, err := url.ParseQuery(c.query)
				if err != nil {
					t.Fatal(err)
				}
				ids, fields, ok := clGraphQL(t, gqltest.Client(t, e.res, c.key), q)
				switch {
				case !ok:
				case c.fields != nil && !slices.Equal(slices.Sorted(slices.Values(fields)), slices.Sorted(slices.Values(c.fields))):
					t.Errorf("GraphQL refused naming %v, want %v", fields, c.fields)
				case c.fields == nil && !slices.Equal(ids, c.want) && (len(ids) > 0 || len(c.want) > 0):
					t.Errorf("GraphQL found %v, want %v", ids, c.want)
				}
			})
		}

		t.Run("each in the form of GET /appointments/{id}", func(t *testing.T) {
			e := e.apOn(t)
			for _, a := range e.clFind(botA, phone+"&from=2027-03-01") {
				r := e.do("GET", "/appointments/"+a.ID, botA, nil)
				expect(t, r, http.StatusOK, "")
				if one := apView(t, r); !apSame(a, one) {
					t.Errorf("listed\n%+v\nread\n%+v", a, one)
				}
			}
		})
		t.Run("another account sees its own alone", func(t *testing.T) {
			e := e.apOn(t)
			for _, q := range []string{phone, phone + "&from=2027-01-01", "external_reference=conv-1"} {
				if got := clIDs(e.clFind(other.APIKey, q)); !slices.Equal(got, []string{theirs}) {
					t.Errorf("%s: another account found %v, want only its own %s", q, got, theirs)
				}
			}
		})
		t.Run("needs appointments:read", func(t *testing.T) {
			e := e.apOn(t)
			k := e.key(domain.ScopeAppointmentsWrite, domain.ScopeCatalogRead)
			expect(t, e.do("GET", "/appointments?"+phone, k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
			a := gqltest.Client(t, e.res, k)(`{ appointmentsByClient(clientPhone: "+351912345678") { id } }`, nil)
			if a.Code() != domain.CodeInsufficientScope {
				t.Errorf("GraphQL without appointments:read: %q %s", a.Code(), a.Messages())
			}
			expect(t, e.do("GET", "/appointments?"+phone, "", nil), http.StatusUnauthorized, domain.CodeMissingAPIKey)
		})
	})
}
