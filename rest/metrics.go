package rest

import (
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"barberd/graph"
)

// Metrics are the Prometheus metrics of one server: HTTP requests (by route
// pattern, method and status) and their latency, the domain events of
// graph.Metrics, rate-limited requests, the database pool, and the Go
// runtime and process. Each Metrics has its own registry, so tests can
// make as many as they like.
//
// Labels are bounded: the route is chi's pattern (never the raw path), and
// a request that matched no route is "unmatched".
type Metrics struct {
	reg *prometheus.Registry

	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	appointments  *prometheus.CounterVec
	conflicts     prometheus.Counter
	holdsCreated  prometheus.Counter
	holdsExpired  prometheus.Counter
	offers        prometheus.Counter
	notifications *prometheus.CounterVec
	rateLimited   prometheus.Counter
	limitsShared  prometheus.Gauge
	redisErrors   prometheus.Counter
	cacheLookups  *prometheus.CounterVec
	lookups       madeOnce[lookupKey, prometheus.Counter] // of cacheLookups
	versionReads  prometheus.Counter
	versionCalls  prometheus.Counter
	admitted      prometheus.Gauge
	admitWaiting  prometheus.Gauge
	admitWait     *prometheus.HistogramVec

	webhookAttempts *prometheus.CounterVec
	webhookLatency  prometheus.Histogram
	webhookBacklog  prometheus.Gauge
	webhookFailing  prometheus.Gauge

	series madeOnce[seriesKey, requestSeries] // of requests and latency
}

var _ graph.Metrics = (*Metrics)(nil)

// NewMetrics returns the metrics of a server over db (nil: no pool stats).
func NewMetrics(db *sql.DB) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "barberd_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "barberd_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		appointments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "barberd_appointments_created_total",
			Help: "Appointments booked (replayed creates not counted), by source (api, admin).",
		}, []string{"source"}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_slot_conflicts_total",
			Help: "Creates, reschedules and holds refused because the slot was taken (slot_unavailable).",
		}),
		holdsCreated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_holds_created_total",
			Help: "Slot holds created.",
		}),
		holdsExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_holds_expired_total",
			Help: "Holds recorded as expired by the background job on this replica.",
		}),
		offers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_waitlist_offers_total",
			Help: "Waitlist entries offered a freed start by this replica.",
		}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "barberd_notifications_written_total",
			Help: "Notifications committed, by type.",
		}, []string{"type"}),
		limitsShared: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "barberd_rate_limits_shared",
			Help: "1 while rate limits are shared with the other replicas through Redis (--redis-url), 0 while this replica limits alone (no --redis-url, or Redis unreachable).",
		}),
		redisErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_rate_limit_redis_errors_total",
			Help: "Rate limit checks that Redis did not answer (each then decided by this replica alone).",
		}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_rate_limited_requests_total",
			Help: "Requests refused with 429 by the per-key rate limit of this replica.",
		}),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "barberd_cache_lookups_total",
			Help: "Lookups in this replica's caches (api_key, catalog, availability; versions: a read of the change versions within the freshness window), by result: hit (a usable entry) or miss.",
		}, []string{"cache", "result"}),
		versionReads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_version_reads_total",
			Help: "Queries of the change versions that cached entries are checked against (one answers every request waiting for it).",
		}),
		versionCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "barberd_version_read_requests_total",
			Help: "Requests that waited for those queries; divided by barberd_version_reads_total, how many shared one.",
		}),
		admitted: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "barberd_admission_slots_in_use",
			Help: "Weight (slots) of the availability computations admitted now by this replica's admission gate, whose capacity is 4096 per core but one.",
		}),
		admitWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "barberd_admission_waiting",
			Help: "Requests waiting for the admission gate to compute the days they miss from the cache.",
		}),
		admitWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "barberd_admission_wait_seconds",
			Help:    "Time requests waited for the admission gate (those admitted at once are not counted), by result: admitted, or refused (unavailable, or the caller went away).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"result"}),
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "barberd_webhook_attempts_total",
			Help: "Webhook requests sent by this replica, by outcome: delivered, retry (to be sent again) or failed (its retries gave up).",
		}, []string{"outcome"}),
		webhookLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "barberd_webhook_delivery_seconds",
			Help:    "Time from a notification's commit to its endpoint's 2xx, for deliveries made by this replica (retries and redeliveries included).",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400},
		}),
		webhookBacklog: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "barberd_webhook_oldest_due_seconds",
			Help: "How long the oldest due webhook delivery of an enabled endpoint has waited, as this replica last looked (every 500ms); 0: none due.",
		}),
		webhookFailing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "barberd_webhook_failing_endpoints",
			Help: "Enabled webhook endpoints whose last delivery to give up was not followed by a delivered one (all accounts; counted every 30s).",
		}),
	}
	reg.MustRegister(m.webhookAttempts, m.webhookLatency, m.webhookBacklog, m.webhookFailing)
	reg.MustRegister(m.requests, m.latency, m.appointments, m.conflicts, m.holdsCreated,
		m.holdsExpired, m.offers, m.notifications, m.rateLimited, m.limitsShared, m.redisErrors, m.cacheLookups, m.versionReads, m.versionCalls,
		m.admitted, m.admitWaiting, m.admitWait,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if db != nil {
		// go_sql_open_connections, go_sql_in_use_connections,
		// go_sql_idle_connections, go_sql_wait_count_total,
		// go_sql_wait_duration_seconds_total, ... {db_name="barberd"}
		reg.MustRegister(collectors.NewDBStatsCollector(db, "barberd"))
	}
	return m
}

// Registry is where the metrics are registered; more may be added.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format. It needs
// no API key: expose it only on an internal network (or have the proxy in
// front of barberd refuse /metrics from outside).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Middleware counts and times every request by route pattern. Put it first
// in the chain, before the package's Middleware, so recovered panics count
// as the 500s they become; that one takes the status from its writer.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			// Also when a panic goes through (http.ErrAbortHandler).
			route := routePattern(r)
			if route == "" {
				route = "unmatched"
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK // nothing written: net/http answers 200
			}
			s := m.series.get(seriesKey{route, methodLabel(r.Method), status}, m.newSeries)
			s.requests.Inc()
			s.latency.Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(ww, r)
	})
}

// seriesKey names the series of an HTTP request's metrics.
type seriesKey struct {
	route, method string
	status        int
}

// requestSeries are the series an HTTP request counts in.
type requestSeries struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

func (m *Metrics) newSeries(k seriesKey) requestSeries {
	return requestSeries{
		requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.status)),
		latency:  m.latency.WithLabelValues(k.route, k.method),
	}
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// AppointmentCreated implements graph.Metrics.
func (m *Metrics) AppointmentCreated(source string) { m.appointments.WithLabelValues(source).Inc() }

// SlotConflict implements graph.Metrics.
func (m *Metrics) SlotConflict() { m.conflicts.Inc() }

// HoldCreated implements graph.Metrics.
func (m *Metrics) HoldCreated() { m.holdsCreated.Inc() }

// HoldsExpired implements graph.Metrics.
func (m *Metrics) HoldsExpired(n int) { m.holdsExpired.Add(float64(n)) }

// WaitlistOffered implements graph.Metrics.
func (m *Metrics) WaitlistOffered(n int) { m.offers.Add(float64(n)) }

// NotificationWritten implements graph.Metrics.
func (m *Metrics) NotificationWritten(typ string) { m.notifications.WithLabelValues(typ).Inc() }

type lookupKey struct {
	cache string
	hit   bool
}

// CacheLookup implements graph.Metrics. Several lookups are counted per
// request, so each counter is found once, not by its labels every time.
func (m *Metrics) CacheLookup(cache string, hit bool) {
	m.lookups.get(lookupKey{cache, hit}, func(k lookupKey) prometheus.Counter {
		result := "miss"
		if k.hit {
			result = "hit"
		}
		return m.cacheLookups.WithLabelValues(k.cache, result)
	}).Inc()
}

// VersionRead implements graph.Metrics.
func (m *Metrics) VersionRead(callers int) {
	m.versionReads.Inc()
	m.versionCalls.Add(float64(callers))
}

// Admission implements graph.Metrics.
func (m *Metrics) Admission(inUse, waiting int) {
	m.admitted.Set(float64(inUse))
	m.admitWaiting.Set(float64(waiting))
}

// AdmissionWaited implements graph.Metrics.
func (m *Metrics) AdmissionWaited(d time.Duration, admitted bool) {
	result := "refused"
	if admitted {
		result = "admitted"
	}
	m.admitWait.WithLabelValues(result).Observe(d.Seconds())
}

// RateLimited counts a request refused by the rate limiter; set it as
// RateLimiter.OnLimited.
func (m *Metrics) RateLimited() { m.rateLimited.Inc() }

// RateLimitsShared sets whether rate limits are shared through Redis; set
// it as SharedLimits.OnChange.
func (m *Metrics) RateLimitsShared(shared bool) {
	v := 0.0
	if shared {
		v = 1
	}
	m.limitsShared.Set(v)
}

// RedisError counts a rate limit check Redis did not answer; set it as
// SharedLimits.OnError.
func (m *Metrics) RedisError() { m.redisErrors.Inc() }

// WebhookAttempted implements webhook.Metrics.
func (m *Metrics) WebhookAttempted(outcome string) { m.webhookAttempts.WithLabelValues(outcome).Inc() }

// WebhookDelivered implements webhook.Metrics.
func (m *Metrics) WebhookDelivered(sinceCommit time.Duration) {
	m.webhookLatency.Observe(sinceCommit.Seconds())
}

// WebhookBacklog implements webhook.Metrics.
func (m *Metrics) WebhookBacklog(oldestDue time.Duration) { m.webhookBacklog.Set(oldestDue.Seconds()) }

// WebhookFailingEndpoints implements webhook.Metrics.
func (m *Metrics) WebhookFailingEndpoints(n int) { m.webhookFailing.Set(float64(n)) }
