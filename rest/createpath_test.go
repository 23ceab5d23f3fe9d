package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"barberd/ent/delivery"
	"barberd/ent/notification"
	"barberd/ent/schema/tenant"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// countingEnv is an env whose database client logs every statement.
func countingEnv(t *testing.T, db *store.DB) (*env, *storetest.StatementLog) {
	t.Helper()
	counted, log := storetest.Counting(db)
	e := newEnv(t, counted)
	log.Take()
	return e, log
}

// phases splits the statements of one request at its transaction: those
// before BEGIN, those from BEGIN to COMMIT (both counted), and those after.
func phases(lines []string) (before, tx, after []string) {
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasSuffix(l, "): started") })
	if i < 0 {
		return lines, nil, nil
	}
	j := slices.IndexFunc(lines, func(l string) bool { return strings.HasSuffix(l, "): committed") })
	if j < i {
		return lines[:i], lines[i:], nil
	}
	return lines[:i], lines[i : j+1], lines[j+1:]
}

// txStatements is what the transaction of POST /appointments with an
// explicit barber and an external reference sends on the happy path, BEGIN
// and COMMIT included (the reference is not looked up: its unique index
// refuses a repeat). On SQLite, whose transactions take the write lock at
// BEGIN: freeing the barber's expired holds and reading its day (hours,
// time off and reservations), the customer, the appointment and its
// reservation, the notification (returning the keys it is owed to) and
// the deliveries. On PostgreSQL the create is guarded (graph.guardedTx):
// the barber's day read unlocked, with the customer's upsert riding in it
// (store.RideCustomer), then one statement that locks the barber, frees
// its expired holds under the new time, and writes the appointment, its
// reservation, the notification and its deliveries (store.Guarded,
// store.Carry).
var txStatements = map[string]int{dialect.SQLite: 9, dialect.Postgres: 4}

func TestCreateStatements(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, log := countingEnv(t, db)
		// The key's first use is recorded; the requests counted are not its first.
		expect(t, e.do("GET", "/context", e.keys.APIKey, nil), http.StatusOK, "")
		count := func(name string, body map[string]any, status int) []string {
			t.Helper()
			log.Take()
			r := e.do("POST", "/appointments", e.keys.APIKey, body)
			lines := log.Take()
			expect(t, r, status, "")
			t.Logf("%s: %d statements\n\t%s", name, len(lines), strings.Join(lines, "\n\t"))
			return lines
		}
		for i, name := range []string{"new customer", "known customer"} {
			body := e.booking(haircut, []string{tuesdayAt10, tuesdayAt11}[i])
			body["barber_id"] = e.barber(joao)
			body["external_reference"] = fmt.Sprintf("count-%d", i)
			before, tx, after := phases(count(name, body, http.StatusCreated))
			if want := txStatements[db.Dialect]; len(tx) != want {
				t.Errorf("%s: the transaction sent %d statements, want %d", name, len(tx), txStatements[db.Dialect])
			}
			if len(after) != 0 {
				t.Errorf("%s: %d statements after COMMIT, want none", name, len(after))
			}
			for _, l := range before {
				if strings.Contains(l, "appointments") {
					t.Errorf("%s: the appointments table read before the transaction: %s", name, l)
				}
			}
		}

		body := e.booking(haircut, "2027-03-02T14:00:00")
		body["external_reference"] = "count-any"
		count("any barber, reference", body, http.StatusCreated)
		count("replay", body, http.StatusOK)
	})
}

// TestCancelFreesLast checks that a cancel's transaction frees the time
// last: on PostgreSQL the deletion of the reservation locks the barber's
// row until the commit (its bookings version), so nothing but the
// waitlist's probe may come between it and COMMIT (the event and the
// waitlist's fence come before it).
func TestCancelFreesLast(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, log := countingEnv(t, db)
		body := e.booking(haircut, tuesdayAt10)
		body["barber_id"] = e.barber(joao)
		r := e.do("POST", "/appointments", e.keys.APIKey, body)
		expect(t, r, http.StatusCreated, "")
		id, _ := r.JSON(t)["id"].(string)
		log.Take()
		expect(t, e.do("POST", "/appointments/"+id+"/cancel", e.keys.APIKey, map[string]any{"reason": "ordering"}), http.StatusOK, "")
		_, tx, _ := phases(log.Take())
		i := slices.IndexFunc(tx, func(l string) bool { return strings.Contains(l, "DELETE FROM reservations") })
		if i < 0 {
			t.Fatalf("the cancel deleted no reservation:\n\t%s", strings.Join(tx, "\n\t"))
		}
		for _, l := range tx[i+1 : len(tx)-1] {
			if !strings.Contains(l, "INSERT INTO openings") {
				t.Errorf("after the reservation's deletion, before COMMIT, the cancel sent %s; want only the waitlist's probe:\n\t%s",
					l, strings.Join(tx, "\n\t"))
			}
		}
	})
}

// TestWritesAnswerAsTheyRead checks that creating, rescheduling and
// cancelling an appointment answer with the appointment exactly as GET
// /appointments/{id} then shows it.
func TestWritesAnswerAsTheyRead(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		same := func(name string, r *response) string {
			t.Helper()
			got := r.JSON(t)
			id, _ := got["id"].(string)
			read := e.do("GET", "/appointments/"+id, e.keys.APIKey, nil)
			expect(t, read, http.StatusOK, "")
			if want := read.JSON(t); !reflect.DeepEqual(got, want) {
				t.Errorf("%s answered\n%s\nbut reads\n%s", name, r.Body, read.Body)
			}
			return id
		}
		create := func(name string, body map[string]any) string {
			t.Helper()
			r := e.do("POST", "/appointments", e.keys.APIKey, body)
			expect(t, r, http.StatusCreated, "")
			return same(name, r)
		}
		body := e.booking(haircut, tuesdayAt10)
		body["barber_id"] = e.barber(joao)
		body["client"] = map[string]any{"name": "  " + clientName + " ", "phone": validPhone, "email": "ana@example.com"}
		body["external_reference"] = "crm-same"
		first := create("a named barber, a new customer", body)

		body = e.booking(haircut, tuesdayAt10) // the known customer, without e-mail
		got := create("any barber, a known customer", body)
		// The appointment shows no e-mail, as none was given; the customer
		// record keeps the one given before.
		c := e.do("GET", "/appointments/"+got, e.keys.APIKey, nil).JSON(t)["client"].(map[string]any)
		if c["email"] != nil {
			t.Errorf("client %v, want no e-mail", c)
		}
		if rec := e.db.Customer.GetX(e.ctx, c["id"].(string)); rec.Email != "ana@example.com" {
			t.Errorf("customer record e-mail %q, want the one given before kept", rec.Email)
		}

		hold := e.do("POST", "/slots/hold", e.keys.APIKey, map[string]any{
			"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "starts_at": tuesdayAt11,
		})
		expect(t, hold, http.StatusCreated, "")
		body = e.booking(haircut, tuesdayAt11)
		body["hold_id"] = hold.JSON(t)["hold_id"]
		create("a hold", body)

		r := e.do("POST", "/appointments/"+first+"/reschedule", e.keys.APIKey, map[string]any{"starts_at": "2027-03-02T15:00:00"})
		expect(t, r, http.StatusOK, "")
		same("reschedule", r)
		r = e.do("POST", "/appointments/"+first+"/cancel", e.keys.APIKey, map[string]any{"reason": "changed plans"})
		expect(t, r, http.StatusOK, "")
		same("cancel", r)

		// A request that fails, with a reference used before, replays.
		body = e.booking(haircut, "2027-03-01T05:00:00") // in the past
		body["external_reference"] = "crm-same"
		r = e.do("POST", "/appointments", e.keys.APIKey, body)
		expect(t, r, http.StatusOK, "")
		if same("a replay", r) != first || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a past time with a used reference did not replay %s: %s", first, r.Body)
		}
	})
}

// TestRaceIdempotentCreateAnywhere races creates with one reference for
// different slots and barbers, and invalid ones: the reference lookup is
// made in the transaction only, so most pass it before the first commits;
// the reference's unique index, or the look again of a refused create,
// turns every one but the first into a replay.
func TestRaceIdempotentCreateAnywhere(t *testing.T) {
	t.Parallel()
	const n = 20
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, n)
		starts := e.lisbonStarts(n)
		rs := r.race(n, func(i int) (string, string, string, any) {
			body := e.raceBooking(i, haircut, starts[i][0], starts[i][1])
			if i%5 == 4 {
				body["starts_at"] = "2027-03-01T05:00:00" // in the past
			}
			body["external_reference"] = "crm-anywhere"
			return "POST", "/appointments", e.keys.APIKey, body
		})
		got := tally(t, rs)
		const refused = "422 outside_booking_window"
		if got["201"] != 1 || got["201"]+got["200"]+got[refused] != n {
			t.Fatalf("outcomes %v, want one 201 and the rest 200 (or 422 for a past time refused before the first commit)", got)
		}
		ids := map[string]bool{}
		for _, res := range rs {
			if res.Status < 300 {
				ids[res.JSON(t)["id"].(string)] = true
			}
		}
		if len(ids) != 1 {
			t.Fatalf("responses name %d appointments, want 1: %v", len(ids), ids)
		}
		if total := e.db.Appointment.Query().CountX(e.ctx); total != 1 {
			t.Fatalf("%d appointments in the database, want 1", total)
		}
	})
}

// TestCreateOwesDeliveries checks who a create's notification is owed to:
// every key of the account, not revoked, with the scope to read
// notifications, once each; no other key, of this account or another.
func TestCreateOwesDeliveries(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		e.otherAccount() // its keys may read notifications too
		key := func(scopes ...string) string {
			t.Helper()
			_, k, err := e.res.CreateAPIKey(context.Background(), e.keys.AccountID, "test key", scopes)
			if err != nil {
				t.Fatal(err)
			}
			return k.ID
		}
		key(domain.ScopeNotificationsRead)
		key(domain.ScopeAppointmentsRead, domain.ScopeNotificationsRead, domain.ScopeAppointmentsWrite)
		key(domain.ScopeAppointmentsRead)
		revoked := key(domain.ScopeNotificationsRead)
		e.db.APIKey.UpdateOneID(revoked).SetRevokedAt(testNow).ExecX(e.ctx)

		r := e.do("POST", "/appointments", e.keys.APIKey, e.booking(haircut, tuesdayAt10))
		expect(t, r, http.StatusCreated, "")
		n := e.db.Notification.Query().Where(notification.AppointmentID(r.JSON(t)["id"].(string))).OnlyX(e.ctx)
		var want, got []string
		for _, k := range e.db.APIKey.Query().AllX(e.ctx) {
			if k.RevokedAt == nil && slices.Contains(k.Scopes, domain.ScopeNotificationsRead) {
				want = append(want, k.ID)
			}
		}
		for _, d := range e.db.Delivery.Query().Where(delivery.NotificationID(n.ID)).AllX(tenant.System(context.Background())) {
			if d.AccountID != e.keys.AccountID || d.DeliveredAt != nil {
				t.Errorf("delivery %+v", d)
			}
			got = append(got, d.APIKeyID)
		}
		slices.Sort(want)
		slices.Sort(got)
		if len(want) < 3 || !slices.Equal(got, want) {
			t.Errorf("owed to %v, want %v", got, want)
		}
	})
}
