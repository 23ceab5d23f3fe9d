package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/demo"
	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/paging"
)

// Helpers shared by catalog_test.go, availability_test.go, hold_test.go and
// errors_test.go. Their names are specific so they do not collide with the
// helpers of the other test files of this package.

// call sends one checked request on behalf of subtest t (e.do reports to the
// env's own test, which must not be failed from a subtest).
func call(t *testing.T, e *env, method, path, key string, body any) *response {
	t.Helper()
	return doRequest(t, e.srv.URL, method, path, key, body, nil)
}

// callWith is call with extra request headers.
func callWith(t *testing.T, e *env, method, path, key string, body any, h http.Header) *response {
	t.Helper()
	return doRequest(t, e.srv.URL, method, path, key, body, h)
}

// problemBody is the part of a problem+json body the tests look at.
type problemBody struct {
	Type      string `json:"type"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
	Errors    []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
	Alternatives []slotBody `json:"alternatives"`
}

func problemOf(t *testing.T, r *response) problemBody {
	t.Helper()
	var p problemBody
	r.Decode(t, &p)
	return p
}

// expectFields fails t unless r is a 400 validation_failed naming exactly
// the given fields (in any order).
func expectFields(t *testing.T, r *response, fields ...string) {
	t.Helper()
	expect(t, r, http.StatusBadRequest, domain.CodeValidationFailed)
	var got []string
	for _, f := range problemOf(t, r).Errors {
		got = append(got, f.Field)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(fields))
	if !slices.Equal(got, want) {
		t.Fatalf("errors name fields %v, want %v: %s", got, want, r.Body)
	}
}

// query builds a path with query parameters, in key, value pairs.
func query(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return path + "?" + q.Encode()
}

// foreignIDs are the ids of the demo catalog of another account.
type foreignIDs struct {
	keys                    *demo.Keys
	unit, service, barberID string
}

// foreign seeds another demo account and returns its Lisbon unit, Haircut
// service and João.
func foreign(t *testing.T, e *env) foreignIDs {
	t.Helper()
	keys := e.otherAccount()
	ctx := tenant.WithAccount(context.Background(), keys.AccountID)
	return foreignIDs{
		keys:     keys,
		unit:     e.db.Unit.Query().Where(unit.Name(lisbon)).OnlyIDX(ctx),
		service:  e.db.Service.Query().Where(service.Name(haircut)).OnlyIDX(ctx),
		barberID: e.db.Barber.Query().Where(barber.Name(joao)).OnlyIDX(ctx),
	}
}

// allScopesBut returns every booking scope except the given one.
func allScopesBut(scope string) []string {
	return slices.DeleteFunc(slices.Clone(domain.BookingScopes), func(s string) bool { return s == scope })
}

type unitBody struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Timezone      string `json:"timezone"`
	Address       string `json:"address"`
	Phone         string `json:"phone"`
	BookingPolicy struct {
		SlotStepMinutes int `json:"slot_step_minutes"`
		MinLeadMinutes  int `json:"min_lead_minutes"`
		HorizonDays     int `json:"horizon_days"`
	} `json:"booking_policy"`
}

type serviceBody struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	DurationMinutes int    `json:"duration_minutes"`
	Price           struct {
		Amount   int64  `json:"amount"`
		Currency string `json:"currency"`
	} `json:"price"`
	UnitIDs []string `json:"unit_ids"`
}

type barberBody struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	UnitIDs    []string `json:"unit_ids"`
	ServiceIDs []string `json:"service_ids"`
}

func listUnits(t *testing.T, e *env) []unitBody {
	t.Helper()
	var got struct{ Data []unitBody }
	r := call(t, e, "GET", "/units", e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	r.Decode(t, &got)
	return got.Data
}

func listServices(t *testing.T, e *env, path string) []serviceBody {
	t.Helper()
	var got struct{ Data []serviceBody }
	r := call(t, e, "GET", path, e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	r.Decode(t, &got)
	return got.Data
}

func listBarbers(t *testing.T, e *env, path string) []barberBody {
	t.Helper()
	var got struct{ Data []barberBody }
	r := call(t, e, "GET", path, e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	r.Decode(t, &got)
	return got.Data
}

func namesOf[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

func wantNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func TestContext(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		type contextBody struct {
			Account struct{ ID, Name string }
			APIKey  struct {
				ID, Name, Prefix string
				Scopes           []string
			} `json:"api_key"`
			ServerTime string `json:"server_time"`
			Limits     struct {
				HoldTTLSeconds struct {
					Default, Min, Max int
				} `json:"hold_ttl_seconds"`
				NotificationsLimit struct {
					Default, Max int
				} `json:"notifications_limit"`
			}
		}
		t.Run("demo key", func(t *testing.T) {
			r := call(t, e, "GET", "/context", e.keys.APIKey, nil)
			expect(t, r, http.StatusOK, "")
			var c contextBody
			r.Decode(t, &c)
			if c.Account.ID != e.keys.AccountID || c.Account.Name != demo.AccountName {
				t.Errorf("account = %+v, want %s %q", c.Account, e.keys.AccountID, demo.AccountName)
			}
			if c.APIKey.ID == "" || c.APIKey.Name != "Demo chatbot" {
				t.Errorf("api_key = %+v", c.APIKey)
			}
			if c.APIKey.Prefix == "" || !strings.HasPrefix(e.keys.APIKey, c.APIKey.Prefix) || len(c.APIKey.Prefix) >= len(e.keys.APIKey) {
				t.Errorf("prefix %q is not a proper prefix of the key", c.APIKey.Prefix)
			}
			if strings.Contains(string(r.Body), e.keys.APIKey) {
				t.Errorf("the response carries the key's secret: %s", r.Body)
			}
			if want := slices.Sorted(slices.Values(domain.BookingScopes)); !slices.Equal(slices.Sorted(slices.Values(c.APIKey.Scopes)), want) {
				t.Errorf("scopes = %v, want %v", c.APIKey.Scopes, want)
			}
			if c.ServerTime != "2027-03-01T06:00:00Z" {
				t.Errorf("server_time = %q, want the test clock 2027-03-01T06:00:00Z", c.ServerTime)
			}
			h := c.Limits.HoldTTLSeconds
			if h.Default != 300 || h.Min != 10 || h.Max != 1800 {
				t.Errorf("hold_ttl_seconds = %+v, want 300/10/1800", h)
			}
			if n := c.Limits.NotificationsLimit; n.Default != 50 || n.Max != 200 {
				t.Errorf("notifications_limit = %+v, want 50/200", n)
			}
		})
		t.Run("server time follows the clock", func(t *testing.T) {
			k := e.key(domain.ScopeContextRead)
			e.clock.advance(90 * time.Minute)
			r := call(t, e, "GET", "/context", k, nil)
			expect(t, r, http.StatusOK, "")
			var c contextBody
			r.Decode(t, &c)
			if c.ServerTime != "2027-03-01T07:30:00Z" {
				t.Errorf("server_time = %q, want 2027-03-01T07:30:00Z", c.ServerTime)
			}
			if !slices.Equal(c.APIKey.Scopes, []string{domain.ScopeContextRead}) || c.APIKey.Name != "test key" {
				t.Errorf("api_key = %+v, want the restricted test key", c.APIKey)
			}
			if strings.Contains(string(r.Body), k) {
				t.Errorf("the response carries the key's secret: %s", r.Body)
			}
		})
	})
}

func TestUnits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("active units by name", func(t *testing.T) {
			us := listUnits(t, e)
			wantNames(t, "units", namesOf(us, func(u unitBody) string { return u.Name }), []string{lisbon, saoPaulo})
			if us[0].ID != e.unit(lisbon) || us[0].Timezone != "Europe/Lisbon" || us[1].Timezone != "America/Sao_Paulo" {
				t.Errorf("units: %+v", us)
			}
			for _, u := range us {
				if u.Address == "" || u.Phone == "" {
					t.Errorf("unit %s lacks address or phone: %+v", u.Name, u)
				}
				if p := u.BookingPolicy; p.SlotStepMinutes != 15 || p.MinLeadMinutes != 60 || p.HorizonDays != 365 {
					t.Errorf("unit %s booking_policy = %+v, want 15/60/365", u.Name, p)
				}
			}
		})
		t.Run("a deactivated unit disappears", func(t *testing.T) {
			id := e.unit(saoPaulo)
			e.db.Unit.UpdateOneID(id).SetActive(false).ExecX(e.ctx)
			us := listUnits(t, e)
			wantNames(t, "units", namesOf(us, func(u unitBody) string { return u.Name }), []string{lisbon})
			expect(t, call(t, e, "GET", query("/services", "unit_id", id), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			expect(t, call(t, e, "GET", query("/barbers", "unit_id", id), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			for _, s := range listServices(t, e, "/services") {
				if slices.Contains(s.UnitIDs, id) {
					t.Errorf("service %s still lists the deactivated unit", s.Name)
				}
			}
		})
		t.Run("another account's units are not listed", func(t *testing.T) {
			f := foreign(t, e)
			for _, u := range listUnits(t, e) {
				if u.ID == f.unit {
					t.Fatalf("unit %s of another account is listed", u.ID)
				}
			}
		})
	})
}

func TestServices(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		byName := func(s serviceBody) string { return s.Name }
		t.Run("only active and online-bookable", func(t *testing.T) {
			ss := listServices(t, e, "/services")
			got := namesOf(ss, byName)
			wantNames(t, "services", got, []string{"Barba completa", beardTrim, "Corte de cabelo", "Corte e barba", haircut, cutAndBeard})
			for _, hidden := range []string{hotTowel, wedding, "Pigmentação", "Dia do noivo"} {
				if slices.Contains(got, hidden) {
					t.Errorf("%s is listed", hidden)
				}
			}
		})
		t.Run("by unit", func(t *testing.T) {
			lis := e.unit(lisbon)
			ss := listServices(t, e, query("/services", "unit_id", lis))
			wantNames(t, "Lisbon services", namesOf(ss, byName), []string{beardTrim, haircut, cutAndBeard})
			for _, s := range ss {
				if !slices.Equal(s.UnitIDs, []string{lis}) {
					t.Errorf("%s unit_ids = %v, want [%s]", s.Name, s.UnitIDs, lis)
				}
				if s.Description == "" || s.Price.Currency != "EUR" {
					t.Errorf("%s: %+v", s.Name, s)
				}
				if s.Name == haircut && (s.DurationMinutes != 30 || s.Price.Amount != 2500 || s.ID != e.service(haircut)) {
					t.Errorf("haircut: %+v", s)
				}
				if s.Name == cutAndBeard && s.DurationMinutes != 60 {
					t.Errorf("haircut and beard lasts %d minutes, want 60", s.DurationMinutes)
				}
			}
			sp := listServices(t, e, query("/services", "unit_id", e.unit(saoPaulo)))
			wantNames(t, "São Paulo services", namesOf(sp, byName), []string{"Barba completa", corte, "Corte e barba"})
			for _, s := range sp {
				if s.Price.Currency != "BRL" {
					t.Errorf("%s currency %s, want BRL", s.Name, s.Price.Currency)
				}
			}
		})
		t.Run("a service made unbookable disappears", func(t *testing.T) {
			e.db.Service.UpdateOneID(e.service(beardTrim)).SetBookableOnline(false).ExecX(e.ctx)
			e.db.Service.UpdateOneID(e.service(corte)).SetActive(false).ExecX(e.ctx)
			e.wroteSQL() // behind barberd's back: the lists are cached
			got := namesOf(listServices(t, e, "/services"), byName)
			wantNames(t, "services", got, []string{"Barba completa", "Corte e barba", haircut, cutAndBeard})
		})
		t.Run("unknown unit", func(t *testing.T) {
			expect(t, call(t, e, "GET", query("/services", "unit_id", "nope"), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeUnitNotFound)
		})
		t.Run("unit of another account", func(t *testing.T) {
			f := foreign(t, e)
			expect(t, call(t, e, "GET", query("/services", "unit_id", f.unit), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			// The other account sees its own unit.
			expect(t, call(t, e, "GET", query("/services", "unit_id", f.unit), f.keys.APIKey, nil), http.StatusOK, "")
		})
	})
}

func TestBarbers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		byName := func(b barberBody) string { return b.Name }
		t.Run("only active", func(t *testing.T) {
			bs := listBarbers(t, e, "/barbers")
			wantNames(t, "barbers", namesOf(bs, byName), []string{"Bruno Lima", joao, miguel, rafael})
		})
		t.Run("units and bookable services of each", func(t *testing.T) {
			lis := e.unit(lisbon)
			for _, b := range listBarbers(t, e, query("/barbers", "unit_id", lis)) {
				if !slices.Equal(b.UnitIDs, []string{lis}) {
					t.Errorf("%s unit_ids = %v", b.Name, b.UnitIDs)
				}
				want := []string{e.service(haircut), e.service(beardTrim), e.service(cutAndBeard)}
				if b.Name == miguel {
					want = want[:2]
				}
				if !sameSet(b.ServiceIDs, want) {
					t.Errorf("%s service_ids = %v, want %v (bookable ones only)", b.Name, b.ServiceIDs, want)
				}
			}
		})
		t.Run("by unit", func(t *testing.T) {
			wantNames(t, "Lisbon", namesOf(listBarbers(t, e, query("/barbers", "unit_id", e.unit(lisbon))), byName), []string{joao, miguel})
			wantNames(t, "São Paulo", namesOf(listBarbers(t, e, query("/barbers", "unit_id", e.unit(saoPaulo))), byName), []string{"Bruno Lima", rafael})
		})
		t.Run("by service", func(t *testing.T) {
			wantNames(t, "haircut", namesOf(listBarbers(t, e, query("/barbers", "service_id", e.service(haircut))), byName), []string{joao, miguel})
			wantNames(t, "haircut and beard", namesOf(listBarbers(t, e, query("/barbers", "service_id", e.service(cutAndBeard))), byName), []string{joao})
			wantNames(t, "barba completa", namesOf(listBarbers(t, e, query("/barbers", "service_id", e.service("Barba completa"))), byName), []string{rafael})
		})
		t.Run("by unit and service", func(t *testing.T) {
			lis, sp := e.unit(lisbon), e.unit(saoPaulo)
			wantNames(t, "Lisbon haircut and beard", namesOf(listBarbers(t, e, query("/barbers", "unit_id", lis, "service_id", e.service(cutAndBeard))), byName), []string{joao})
			wantNames(t, "Lisbon beard trim", namesOf(listBarbers(t, e, query("/barbers", "unit_id", lis, "service_id", e.service(beardTrim))), byName), []string{joao, miguel})
			if bs := listBarbers(t, e, query("/barbers", "unit_id", sp, "service_id", e.service(haircut))); len(bs) != 0 {
				t.Errorf("São Paulo barbers performing a Lisbon service: %v", namesOf(bs, byName))
			}
		})
		t.Run("a deactivated barber disappears", func(t *testing.T) {
			e.db.Barber.UpdateOneID(e.barber(miguel)).SetActive(false).ExecX(e.ctx)
			e.wroteSQL() // behind barberd's back: the lists are cached
			wantNames(t, "Lisbon", namesOf(listBarbers(t, e, query("/barbers", "unit_id", e.unit(lisbon))), byName), []string{joao})
		})
		t.Run("unknown ids", func(t *testing.T) {
			k := e.keys.APIKey
			expect(t, call(t, e, "GET", query("/barbers", "unit_id", "nope"), k, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			expect(t, call(t, e, "GET", query("/barbers", "service_id", "nope"), k, nil), http.StatusNotFound, domain.CodeServiceNotFound)
			expect(t, call(t, e, "GET", query("/barbers", "unit_id", e.unit(lisbon), "service_id", "nope"), k, nil), http.StatusNotFound, domain.CodeServiceNotFound)
		})
		t.Run("ids of another account", func(t *testing.T) {
			f := foreign(t, e)
			k := e.keys.APIKey
			expect(t, call(t, e, "GET", query("/barbers", "unit_id", f.unit), k, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			expect(t, call(t, e, "GET", query("/barbers", "service_id", f.service), k, nil), http.StatusNotFound, domain.CodeServiceNotFound)
			for _, b := range listBarbers(t, e, "/barbers") {
				if b.ID == f.barberID {
					t.Fatalf("barber %s of another account is listed", b.ID)
				}
			}
		})
	})
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("missing key", func(t *testing.T) {
			expect(t, call(t, e, "GET", "/units", "", nil), http.StatusUnauthorized, domain.CodeMissingAPIKey)
		})
		t.Run("invalid key", func(t *testing.T) {
			expect(t, call(t, e, "GET", "/units", "bk_nope", nil), http.StatusUnauthorized, domain.CodeInvalidAPIKey)
		})
		t.Run("revoked key", func(t *testing.T) {
			secret, k, err := e.res.CreateAPIKey(context.Background(), e.keys.AccountID, "revoked", domain.BookingScopes)
			if err != nil {
				t.Fatal(err)
			}
			expect(t, call(t, e, "GET", "/units", secret, nil), http.StatusOK, "")
			e.db.APIKey.UpdateOneID(k.ID).SetRevokedAt(testNow).ExecX(e.ctx)
			for _, path := range []string{"/context", "/units", "/services", "/barbers"} {
				expect(t, call(t, e, "GET", path, secret, nil), http.StatusUnauthorized, domain.CodeInvalidAPIKey)
			}
			expect(t, call(t, e, "POST", "/slots/hold", secret, map[string]any{}), http.StatusUnauthorized, domain.CodeInvalidAPIKey)
			// The account's other keys still work.
			expect(t, call(t, e, "GET", "/units", e.keys.APIKey, nil), http.StatusOK, "")
		})
	})
}

// TestScopes asks each endpoint with a key holding every booking scope but
// the one it needs.
func TestScopes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		lis, hc := e.unit(lisbon), e.service(haircut)
		hold := map[string]any{"unit_id": lis, "service_id": hc, "starts_at": tuesdayAt10}
		tests := []struct {
			name, scope, method, path string
			body                      any
		}{
			{"context", domain.ScopeContextRead, "GET", "/context", nil},
			{"units", domain.ScopeCatalogRead, "GET", "/units", nil},
			{"services", domain.ScopeCatalogRead, "GET", "/services", nil},
			{"services by unit", domain.ScopeCatalogRead, "GET", query("/services", "unit_id", lis), nil},
			{"barbers", domain.ScopeCatalogRead, "GET", "/barbers", nil},
			{"availability", domain.ScopeAvailabilityRead, "GET", query("/availability", "unit_id", lis, "service_id", hc, "date", tuesday), nil},
			{"hold", domain.ScopeHoldsWrite, "POST", "/slots/hold", hold},
			{"release", domain.ScopeHoldsWrite, "POST", "/slots/hold/nope/release", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				k := e.key(allScopesBut(tt.scope)...)
				r := call(t, e, tt.method, tt.path, k, tt.body)
				expect(t, r, http.StatusForbidden, domain.CodeInsufficientScope)
				// The full demo key is let in.
				if r := call(t, e, tt.method, tt.path, e.keys.APIKey, tt.body); r.Status == http.StatusForbidden || r.Status == http.StatusUnauthorized {
					t.Fatalf("demo key refused: %d %s", r.Status, r.Body)
				}
			})
		}
		t.Run("admin alone is no booking scope", func(t *testing.T) {
			k := e.key(domain.ScopeAdmin)
			expect(t, call(t, e, "GET", "/units", k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
		})
		t.Run("a scope-limited key sees only its endpoint", func(t *testing.T) {
			k := e.key(domain.ScopeContextRead)
			expect(t, call(t, e, "GET", "/context", k, nil), http.StatusOK, "")
			expect(t, call(t, e, "GET", "/units", k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
		})
	})
}

// The catalog lists are whole, unlike GraphQL's lists, which serve a page of
// graph.DefaultPageSize unless asked for more: v1 promises every unit,
// service and barber, and an account has at most graph.MaxCatalog of each.
func TestCatalogListsAreWhole(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		extra := paging.DefaultPageSize + 10
		units := make([]*ent.UnitCreate, extra)
		services := make([]*ent.ServiceCreate, extra)
		barbers := make([]*ent.BarberCreate, extra)
		for i := range extra {
			units[i] = e.db.Unit.Create().SetAccountID(e.keys.AccountID).SetName(fmt.Sprintf("Unit %03d", i)).SetTimezone("Europe/Lisbon")
			services[i] = e.db.Service.Create().SetAccountID(e.keys.AccountID).SetName(fmt.Sprintf("Service %03d", i)).
				SetDurationMinutes(30).SetPriceAmount(1500).SetPriceCurrency("EUR")
			barbers[i] = e.db.Barber.Create().SetAccountID(e.keys.AccountID).SetName(fmt.Sprintf("Barber %03d", i))
		}
		e.db.Unit.CreateBulk(units...).ExecX(e.ctx)
		e.db.Service.CreateBulk(services...).ExecX(e.ctx)
		e.db.Barber.CreateBulk(barbers...).ExecX(e.ctx)
		for path, c := range map[string][2]int{
			"/units":    {len(listUnits(t, e)), e.db.Unit.Query().Where(unit.Active(true)).CountX(e.ctx)},
			"/services": {len(listServices(t, e, "/services")), e.db.Service.Query().Where(service.Active(true), service.BookableOnline(true)).CountX(e.ctx)},
			"/barbers":  {len(listBarbers(t, e, "/barbers")), e.db.Barber.Query().Where(barber.Active(true)).CountX(e.ctx)},
		} {
			if c[0] != c[1] || c[0] <= paging.DefaultPageSize {
				t.Errorf("GET %s: %d entries, want all %d", path, c[0], c[1])
			}
		}
	})
}
