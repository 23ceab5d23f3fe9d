// Package rest is the REST v1 adapter of barberd (rest-v1.md): it decodes a
// request, checks its shape, calls the GraphQL resolver that implements the
// operation, and renders the v1 JSON or a problem+json error. It holds no
// SQL and no booking rule.
//
// # Limits kept in memory, or in Redis
//
// The rate limiter (per API key) and the address limits (requests without a
// key, failed authentications) are token buckets in process memory, one set
// per replica: with N replicas a caller may make up to N times the
// configured rate in all. The limits protect each process (and, through it,
// the shared database's pool) from one noisy caller. A bucket left alone long
// enough to refill is the same as a new one, so idle buckets are evicted.
// With SharedLimits (serve's --redis-url) the buckets live in Redis instead,
// one per key or address for every replica; Redis is asked with a short
// timeout, and while it fails each replica falls back to its own buckets, so
// Redis is never a reason to refuse a request.
package rest

import (
	_ "embed"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"barberd/ent"
	"barberd/graph"
	"barberd/graph/admin"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/graph/model"
	"barberd/rest/view"
)

// OpenAPI is the OpenAPI 3.1 document of the v1 interface.
//
//go:embed openapi.json
var OpenAPI []byte

// BasePath is where the v1 interface is mounted.
const BasePath = "/api/integrations/v1"

type api struct {
	res  *graph.Resolver
	q    graph.QueryResolver
	m    graph.MutationResolver
	days *fresh.Memo[dayKey, taggedDay]
}

// Option configures the v1 handler.
type Option func(*options)

type options struct {
	limiter *RateLimiter
	addr    *AddrLimits
	maxBody int64
}

// WithMaxBody refuses bodies over n bytes with payload_too_large (default
// DefaultMaxBody).
func WithMaxBody(n int64) Option { return func(o *options) { o.maxBody = n } }

// WithRateLimiter charges every authenticated request to its key's bucket
// in l (nil: no limit). Share one l between handlers serving the same keys.
func WithRateLimiter(l *RateLimiter) Option { return func(o *options) { o.limiter = l } }

// WithAddrLimits limits failed authentications per client address (nil:
// no limit). Share one l between handlers, as with WithRateLimiter.
func WithAddrLimits(l *AddrLimits) Option { return func(o *options) { o.addr = l } }

// New returns the v1 handler, to be mounted at BasePath. It expects
// Middleware to run before it.
func New(res *graph.Resolver, opts ...Option) http.Handler {
	o := options{maxBody: DefaultMaxBody}
	for _, opt := range opts {
		opt(&o)
	}
	a := &api{res: res, q: res.Query(), m: res.Mutation(), days: newEncodedDays(res)}
	r := chi.NewRouter()
	r.Use(middleware.GetHead) // HEAD works wherever GET does (RFC 9110 9.3.2)
	r.Use(LimitBody(o.maxBody, false, WriteError))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, domain.Errorf(domain.CodeNotFound, "There is no %s %s in this API.", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", Allowed(r))
		WriteError(w, r, domain.Errorf(codeMethodNotAllowed, "%s is not allowed on %s.", r.Method, r.URL.Path))
	})
	r.Get("/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(OpenAPI)
	})
	r.Group(func(r chi.Router) {
		r.Use(Authenticate(res, o.addr, true, WriteError))
		r.Use(o.limiter.Middleware(WriteError))
		r.Use(SettleWrites(res.Settings().FreshnessWindow))
		r.Get("/context", a.context)
		r.Get("/units", a.units)
		r.Get("/services", a.services)
		r.Get("/barbers", a.barbers)
		r.Get("/availability", a.availability)
		r.Get("/availability/range", a.availabilityRange)
		r.Get("/availability/next", a.availabilityNext)
		r.Post("/slots/hold", a.holdSlot)
		r.Post("/slots/hold/release-all", a.releaseAllHolds)
		r.With(pathID(domain.CodeHoldNotFound, "hold")).Post("/slots/hold/{id}/release", a.releaseHold)
		r.Get("/appointments", a.clientAppointments)
		r.Post("/appointments", a.createAppointment)
		appointmentID := r.With(pathID(domain.CodeAppointmentNotFound, "appointment"))
		appointmentID.Get("/appointments/{id}", a.appointment)
		appointmentID.Post("/appointments/{id}/cancel", a.cancelAppointment)
		appointmentID.Post("/appointments/{id}/reschedule", a.rescheduleAppointment)
		r.Get("/waitlist", a.clientWaitlist)
		r.Post("/waitlist", a.joinWaitlist)
		waitlistID := r.With(pathID(domain.CodeWaitlistEntryNotFound, "waitlist entry"))
		waitlistID.Get("/waitlist/{id}", a.waitlistEntry)
		waitlistID.Delete("/waitlist/{id}", a.leaveWaitlist)
		r.Get("/notifications/pending", a.pendingNotifications)
		r.Post("/notifications/ack", a.ackNotifications)
	})
	return r
}

// respond renders a resolver's result with render, or its error.
func respond[T, V any](w http.ResponseWriter, r *http.Request, status int, v T, err error, render func(T) V) {
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, status, render(v))
}

// respondAppointment renders an appointment, or an error.
func respondAppointment(w http.ResponseWriter, r *http.Request, status int, a *ent.Appointment, err error) {
	if err == nil {
		var v view.Appointment
		if v, err = view.AppointmentOf(a); err == nil {
			writeJSON(w, status, v)
			return
		}
	}
	WriteError(w, r, err)
}

// respondHold renders a hold, or an error.
func respondHold(w http.ResponseWriter, r *http.Request, status int, h *ent.Hold, err error) {
	if err == nil {
		var view Hold
		if view, err = HoldOf(h); err == nil {
			writeJSON(w, status, view)
			return
		}
	}
	WriteError(w, r, err)
}

func (a *api) context(w http.ResponseWriter, r *http.Request) {
	c, err := a.q.Context(r.Context())
	respond(w, r, http.StatusOK, c, err, ContextOf)
}

// wholeCatalog is the page of the catalog lists: v1 lists all of it, and an
// account has at most graph.MaxCatalog units, services and barbers.
var wholeCatalog = admin.MaxCatalog

func (a *api) units(w http.ResponseWriter, r *http.Request) {
	us, err := a.q.BookableUnits(r.Context(), &wholeCatalog)
	respond(w, r, http.StatusOK, us, err, func(us []*ent.Unit) List[Unit] { return ListOf(us, UnitOf) })
}

func (a *api) services(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	unitID := f.str("unit_id")
	if err := f.check(nil); err != nil {
		WriteError(w, r, err)
		return
	}
	ss, err := a.q.BookableServices(r.Context(), unitID, &wholeCatalog)
	respond(w, r, http.StatusOK, ss, err, func(ss []*ent.Service) List[Service] { return ListOf(ss, ServiceOf) })
}

func (a *api) barbers(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	unitID, serviceID := f.str("unit_id"), f.str("service_id")
	if err := f.check(nil); err != nil {
		WriteError(w, r, err)
		return
	}
	bs, err := a.q.BookableBarbers(r.Context(), unitID, serviceID, &wholeCatalog)
	respond(w, r, http.StatusOK, bs, err, func(bs []*ent.Barber) List[Barber] { return ListOf(bs, BarberOf) })
}

func (a *api) holdSlot(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	in := model.HoldSlotInput{
		UnitID: f.text("unit_id"), ServiceID: f.text("service_id"), BarberID: f.str("barber_id"),
		StartsAt: f.text("starts_at"), TTLSeconds: f.integer("ttl_seconds"),
	}
	if err := f.check(a.res.CheckHoldSlot(in)); err != nil {
		WriteError(w, r, err)
		return
	}
	h, err := a.m.HoldSlot(r.Context(), in)
	respondHold(w, r, http.StatusCreated, h, err)
}

func (a *api) releaseHold(w http.ResponseWriter, r *http.Request) {
	if _, err := decodeBody(w, r, true); err != nil {
		WriteError(w, r, err)
		return
	}
	h, err := a.m.ReleaseHold(r.Context(), chi.URLParam(r, "id"))
	respondHold(w, r, http.StatusOK, h, err)
}

// releaseAllHolds releases every active hold of the key (a v1 extension).
func (a *api) releaseAllHolds(w http.ResponseWriter, r *http.Request) {
	if _, err := decodeBody(w, r, true); err != nil {
		WriteError(w, r, err)
		return
	}
	p, err := a.m.ReleaseAllHolds(r.Context())
	respond(w, r, http.StatusOK, p, err, func(p *model.ReleaseHoldsPayload) ReleasedHolds {
		return ReleasedHolds{Released: p.Released}
	})
}

func (a *api) createAppointment(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	c := f.object("client")
	in := model.CreateAppointmentInput{
		UnitID: f.text("unit_id"), ServiceID: f.text("service_id"), BarberID: f.str("barber_id"),
		HoldID: f.str("hold_id"), StartsAt: f.text("starts_at"), ExternalReference: f.str("external_reference"),
		Client: clientInput(c),
	}
	if err := f.check(graph.CheckCreateAppointment(in)); err != nil {
		WriteError(w, r, err)
		return
	}
	p, err := a.m.CreateAppointment(r.Context(), in)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	respondAppointment(w, r, createdStatus(w, p.Replayed), p.Appointment, nil)
}

// clientInput reads the client object of a body.
func clientInput(c *fields) *model.ClientInput {
	return &model.ClientInput{Name: c.text("name"), Phone: c.text("phone"), Email: c.str("email")}
}

// createdStatus is the status of a create: 201, or 200 with header
// Idempotent-Replayed when its external_reference was used before.
func createdStatus(w http.ResponseWriter, replayed bool) int {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		return http.StatusOK
	}
	return http.StatusCreated
}

func (a *api) appointment(w http.ResponseWriter, r *http.Request) {
	ap, err := a.q.Appointment(r.Context(), chi.URLParam(r, "id"))
	respondAppointment(w, r, http.StatusOK, ap, err)
}

func (a *api) cancelAppointment(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	reason := f.text("reason")
	if err := f.check(graph.CheckCancel(reason)); err != nil {
		WriteError(w, r, err)
		return
	}
	ap, err := a.m.CancelAppointment(r.Context(), chi.URLParam(r, "id"), reason)
	respondAppointment(w, r, http.StatusOK, ap, err)
}

func (a *api) rescheduleAppointment(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	in := model.RescheduleAppointmentInput{StartsAt: f.text("starts_at"), BarberID: f.str("barber_id"), HoldID: f.str("hold_id")}
	if err := f.check(graph.CheckReschedule(in)); err != nil {
		WriteError(w, r, err)
		return
	}
	ap, err := a.m.RescheduleAppointment(r.Context(), chi.URLParam(r, "id"), in)
	respondAppointment(w, r, http.StatusOK, ap, err)
}

func (a *api) pendingNotifications(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	limit, peek := f.integer("limit"), f.boolean("peek")
	if err := f.check(a.res.CheckNotificationsLimit(limit)); err != nil {
		WriteError(w, r, err)
		return
	}
	var ns []*ent.Notification
	var err error
	if peek != nil && *peek {
		ns, err = a.q.PendingNotifications(r.Context(), limit)
	} else {
		ns, err = a.m.TakeNotifications(r.Context(), limit)
	}
	respond(w, r, http.StatusOK, ns, err, func(ns []*ent.Notification) List[view.Notification] { return ListOf(ns, view.NotificationOf) })
}

func (a *api) ackNotifications(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	through := f.text("through")
	if err := f.check(graph.CheckAck(through)); err != nil {
		WriteError(w, r, err)
		return
	}
	ack, err := a.m.AckNotifications(r.Context(), through)
	respond(w, r, http.StatusOK, ack, err, func(a *model.AckNotificationsPayload) map[string]int {
		return map[string]int{"acknowledged": a.Acknowledged}
	})
}
