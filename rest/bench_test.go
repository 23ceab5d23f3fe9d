package rest_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/cmd/barberbench/floor"
	"barberd/ent/apikey"
	"barberd/graph"
	"barberd/graph/slots"
	"barberd/graph/storetest"
)

// The benchmarks compare barberd with floors measured in the same run on
// the same machine, since absolute numbers on a shared machine mean little:
//
//   - BenchmarkCreateAppointment/<db> against BenchmarkFloorWrite/<db>: the
//     essential SQL of a create (package barberd/cmd/barberbench/floor), run
//     directly on the database at the same concurrency on the same rows (key,
//     unit, service, barbers, client): one transaction that checks the
//     external reference, locks the barber (PostgreSQL), reads the barber's
//     overlapping reservations and time off, upserts the customer and inserts
//     the appointment, its reservation, its notification and the delivery to
//     one key, retried as barberd retries;
//   - BenchmarkHoldSlot/<db> and BenchmarkCancelAppointment/<db>: those
//     writes alone on the same slots, to compare builds by (barberbench
//     measures them against floors of their own);
//   - BenchmarkAvailability/<db> against BenchmarkFloorHTTP: an HTTP round
//     trip through the same middleware to a handler that only writes a small
//     JSON body (the not_found route), with the same client.
//
// Run: go test ./rest -run '^$' -bench . -benchtime 2s

// benchClient keeps a connection per concurrent request alive.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// benchDo sends a request without the OpenAPI check, which would cost more
// than the request itself.
func benchDo(b *testing.B, e *env, method, path string, body any) *response {
	return send(b, benchClient, newRequest(b, e.srv.URL, method, path, e.keys.APIKey, body, nil))
}

// bookableStarts lists distinct (barber, start) pairs of the demo Lisbon
// unit for the 30-minute haircut, day after day from the test Tuesday.
func bookableStarts(n int) []string {
	starts := make([]string, 0, n)
	d, _ := slots.ParseDate(tuesday)
	for len(starts) < n {
		if wd := d.Weekday(); wd != time.Sunday && wd != time.Saturday {
			for _, h := range []int{9, 10, 11, 13, 14, 15, 16, 17, 18} {
				for _, m := range []int{0, 30} {
					starts = append(starts, fmt.Sprintf("%sT%02d:%02d:00", d, h, m))
				}
			}
		}
		d = d.AddDays(1)
	}
	return starts[:n]
}

func BenchmarkCreateAppointment(b *testing.B) {
	benchBookings(b, nil, func(e *env, body map[string]any, _ string) {
		if r := benchDo(b, e, "POST", "/appointments", body); r.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
	})
}

// BenchmarkHoldSlot holds the slots BenchmarkCreateAppointment books, for a
// key without a hold cap.
func BenchmarkHoldSlot(b *testing.B) { benchHolds(b, 0) }

// BenchmarkHoldSlotCapped is BenchmarkHoldSlot for a key with a cap it
// does not reach: each hold counts the key's holds before it is written
// and, on PostgreSQL, again in its COMMIT, under the key's lock.
func BenchmarkHoldSlotCapped(b *testing.B) { benchHolds(b, 1<<20) }

// benchHolds holds the slots BenchmarkCreateAppointment books, for a key
// whose cap is most (0: none).
func benchHolds(b *testing.B, most int) {
	benchBookings(b, func(e *env, _ []map[string]any) []string {
		e.reconfigure(func(c *graph.Settings) { c.Limits.ActiveHoldsPerKey = most })
		return nil
	}, func(e *env, body map[string]any, _ string) {
		delete(body, "client")
		if r := benchDo(b, e, "POST", "/slots/hold", body); r.Status != http.StatusCreated {
			b.Fatalf("hold: %d %s", r.Status, r.Body)
		}
	})
}

// BenchmarkCancelAppointment cancels appointments booked before the timer
// starts, one each.
func BenchmarkCancelAppointment(b *testing.B) {
	benchBookings(b, func(e *env, bodies []map[string]any) []string {
		return benchBook(b, e, bodies)
	}, func(e *env, _ map[string]any, id string) {
		if r := benchDo(b, e, "POST", "/appointments/"+id+"/cancel", map[string]any{"reason": "benchmark"}); r.Status != http.StatusOK {
			b.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
	})
}

// BenchmarkRescheduleAppointment moves appointments, booked before the
// timer starts on as many later slots, onto the slots
// BenchmarkCreateAppointment books, one each, with the same barber.
func BenchmarkRescheduleAppointment(b *testing.B) {
	benchBookings(b, func(e *env, bodies []map[string]any) []string {
		n := len(bodies)/2 + 1 // the starts the bodies use: bookableStarts(n)
		later := bookableStarts(2 * n)[n:]
		at := make([]map[string]any, len(bodies))
		for i, body := range bodies {
			at[i] = maps.Clone(body)
			at[i]["starts_at"] = later[i/2]
		}
		return benchBook(b, e, at)
	}, func(e *env, body map[string]any, id string) {
		if r := benchDo(b, e, "POST", "/appointments/"+id+"/reschedule", map[string]any{"starts_at": body["starts_at"]}); r.Status != http.StatusOK {
			b.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
	})
}

// benchBook books each body, before the timer starts, and returns the
// appointments' ids.
func benchBook(b *testing.B, e *env, bodies []map[string]any) []string {
	ids := make([]string, len(bodies))
	for i, body := range bodies {
		r := benchDo(b, e, "POST", "/appointments", body)
		if r.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		ids[i], _ = r.JSON(b)["id"].(string)
	}
	return ids
}

// benchBookings runs write b.N times from 4 goroutines per CPU, each time
// with a create's body for a distinct slot of the demo Lisbon haircut
// (either barber named, in turn) and the id prepare returned for it;
// prepare, when given, runs on the bodies before the timer starts.
func benchBookings(b *testing.B, prepare func(*env, []map[string]any) []string, write func(e *env, body map[string]any, id string)) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			e := newEnv(b, storetest.Open(b, d))
			barbers := []string{e.barber(joao), e.barber(miguel)}
			starts := bookableStarts(b.N/len(barbers) + 1)
			bodies := make([]map[string]any, b.N)
			for i := range bodies {
				bodies[i] = e.booking(haircut, starts[i/len(barbers)])
				bodies[i]["barber_id"] = barbers[i%len(barbers)]
			}
			ids := make([]string, b.N)
			if prepare != nil {
				if got := prepare(e, bodies); got != nil {
					ids = got
				}
			}
			var next atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1) - 1)
					write(e, bodies[i], ids[i])
				}
			})
		})
	}
}

func BenchmarkFloorWrite(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			db := storetest.Open(b, d)
			e := newEnv(b, db)
			// What BenchmarkCreateAppointment books: the demo chatbot key, the
			// Lisbon haircut with either barber, slot after slot, for the
			// same client.
			f, err := floor.New(db.SQL, db.Dialect, floor.Target{
				AccountID: e.keys.AccountID,
				UnitID:    e.unit(lisbon),
				ServiceID: e.service(haircut),
				APIKeyID:  e.db.APIKey.Query().Where(apikey.Name("Demo chatbot")).OnlyIDX(e.ctx),
				BarberIDs: []string{e.barber(joao), e.barber(miguel)},
				Start:     testNow.Add(24 * time.Hour),
				Duration:  30 * time.Minute,
				Phones:    []string{validPhone},
			})
			if err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := f.Create(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func BenchmarkAvailability(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			e := newEnv(b, storetest.Open(b, d))
			benchGet(b, e, fmt.Sprintf("/availability?unit_id=%s&service_id=%s&date=%s", e.unit(lisbon), e.service(haircut), tuesday))
		})
	}
}

// BenchmarkAvailabilityRange asks for a week of every barber's haircuts.
func BenchmarkAvailabilityRange(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			e := newEnv(b, storetest.Open(b, d))
			path := fmt.Sprintf("/availability/range?unit_id=%s&service_id=%s&from=%s&to=2027-03-08", e.unit(lisbon), e.service(haircut), tuesday)
			benchGet(b, e, path)
		})
	}
}

// BenchmarkAvailabilityNext asks for the next three haircuts when every
// barber is away for the next 20 days.
func BenchmarkAvailabilityNext(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			e := newEnv(b, storetest.Open(b, d))
			for _, name := range []string{joao, miguel} {
				e.timeOff(b, name, testNow, testNow.AddDate(0, 0, 20))
			}
			path := fmt.Sprintf("/availability/next?unit_id=%s&service_id=%s", e.unit(lisbon), e.service(haircut))
			if r := benchDo(b, e, "GET", path, nil); !strings.Contains(string(r.Body), `"starts_at":"2027-03-22T`) {
				b.Fatalf("the first free haircut should be on 2027-03-22: %s", r.Body)
			}
			benchGet(b, e, path)
		})
	}
}

// benchGet measures GET path, which must answer 200, from 4 goroutines
// per CPU.
func benchGet(b *testing.B, e *env, path string) {
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := benchDo(b, e, "GET", path, nil); r.Status != http.StatusOK {
				b.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
		}
	})
}

func BenchmarkFloorHTTP(b *testing.B) {
	e := newEnv(b, storetest.Open(b, dialect.SQLite))
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := benchDo(b, e, "GET", "/nope", nil); r.Status != http.StatusNotFound {
				b.Fatalf("floor: %d", r.Status)
			}
		}
	})
}
