package httpapi

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the simulator's Prometheus metrics, on a registry of their own.
type Metrics struct {
	Registry    *prometheus.Registry
	transitions *prometheus.CounterVec
	violations  *prometheus.CounterVec
	isolations  *prometheus.CounterVec
	requests    *prometheus.HistogramVec
	panics      prometheus.Counter
	faults      *prometheus.CounterVec
	// held reads a server's held requests per tenant, and their limits (set by NewServer).
	held atomic.Pointer[heldView]
	// routes are the route labels requests may carry: the server's routes. A request that
	// matched none is labelled "unmatched", so made-up paths add no series.
	routes atomic.Pointer[map[string]bool]
	// longPolls counts the long-polls waiting now: the engine's (its server sets it).
	longPolls atomic.Pointer[func() int]
}

// methodLabels are the request methods counted by name; the rest are "OTHER".
var methodLabels = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// MetricsSources are what /metrics reads on each scrape, wired in by the binary (the HTTP
// layer knows no store).
type MetricsSources struct {
	// Counts returns the number of objects per kind and state (store.Store.Counts).
	Counts func(ctx context.Context) (map[[2]string]int, error)
	// Journal, when set, returns the counters of a durable store's journal (the SQLite store's
	// JournalStats, converted).
	Journal func() JournalStats
	// Overdue, when set, counts the objects overdue in a transition (engine.Engine.Overdue).
	Overdue func(ctx context.Context) (int, error)
	// Version is the simulator's version, exported as lifecyclesim_build_info.
	Version string
}

// JournalStats are the counters of a durable store's journal, as /metrics exports them.
type JournalStats struct {
	// Transactions appended to the journal, the Commits they carried, Checkpoints into the
	// tables and the commits they applied.
	Transactions, Commits, Checkpoints, Checkpointed uint64
	// CheckpointTime is the time those checkpoints took, the failed ones too.
	CheckpointTime time.Duration
}

// NewMetrics registers the metrics; objects are counted from src on each scrape.
func NewMetrics(src MetricsSources) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecyclesim_transitions_total",
			Help: "Finished operations by kind, action and outcome (succeeded, failed, healed, preempted).",
		}, []string{"kind", "action", "outcome"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecyclesim_invariant_violations_total",
			Help: "Cross-object invariant violations seen (with --check-invariants), by invariant.",
		}, []string{"invariant"}),
		isolations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lifecyclesim_worker_isolations_total",
			Help: "Times the worker failed to advance an object and set it aside (retried after a backoff of its own), by kind.",
		}, []string{"kind"}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lifecyclesim_http_request_duration_seconds",
			Help:    "HTTP request latency by method, route and status code.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"method", "route", "code"}),
	}
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "lifecyclesim_http_panics_total",
		Help: "Handler panics recovered (each answered with a 500).",
	})
	m.faults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lifecyclesim_fault_firings_total",
		Help: "Fault rules fired, by the kind and action they fired on (\"\" for a request naming no action of the kind) and the rule's mode.",
	}, []string{"kind", "action", "mode"})
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "lifecyclesim_build_info",
		Help:        "Always 1; its labels name the simulator's version and the Go release it was built with.",
		ConstLabels: prometheus.Labels{"version": cmp.Or(src.Version, "unknown"), "go_version": runtime.Version()},
	})
	buildInfo.Set(1)
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lifecyclesim_long_polls",
		Help: "Long-polls (?wait=static) waiting now for their object to change.",
	}, func() float64 {
		if f := m.longPolls.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	m.Registry.MustRegister(m.transitions, m.violations, m.isolations, m.requests, m.panics, m.faults, buildInfo, waiting,
		objectsCollector{counts: src.Counts}, heldCollector{m: m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Overdue != nil {
		m.Registry.MustRegister(overdueCollector{overdue: src.Overdue})
	}
	if journal := src.Journal; journal != nil {
		m.Registry.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "lifecyclesim_store_journal_transactions_total",
				Help: "Synced transactions that appended to the SQLite store's journal (one fsync each).",
			}, func() float64 { return float64(journal().Transactions) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "lifecyclesim_store_journal_commits_total",
				Help: "Store commits those transactions carried (group commit: many per transaction under load).",
			}, func() float64 { return float64(journal().Commits) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "lifecyclesim_store_checkpoints_total",
				Help: "Checkpoints of the journal into the SQLite store's tables.",
			}, func() float64 { return float64(journal().Checkpoints) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "lifecyclesim_store_checkpointed_commits_total",
				Help: "Store commits those checkpoints applied (commits minus these is what only the journal holds yet).",
			}, func() float64 { return float64(journal().Checkpointed) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "lifecyclesim_store_checkpoint_seconds_total",
				Help: "Time those checkpoints took (the writer appends nothing meanwhile: commits wait).",
			}, func() float64 { return journal().CheckpointTime.Seconds() }))
	}
	return m
}

// Transition counts a finished operation.
func (m *Metrics) Transition(kind, action, outcome string) {
	m.transitions.WithLabelValues(kind, action, outcome).Inc()
}

// Violation counts an invariant violation.
func (m *Metrics) Violation(invariant string) {
	m.violations.WithLabelValues(invariant).Inc()
}

// Fault counts a firing of a fault rule (engine.Options.OnFault).
func (m *Metrics) Fault(kind, action, mode string) {
	m.faults.WithLabelValues(kind, action, mode).Inc()
}

// Isolation counts an object the worker set aside.
func (m *Metrics) Isolation(kind string) {
	m.isolations.WithLabelValues(kind).Inc()
}

// middleware observes request latency.
func (m *Metrics) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		status := c.Response().Status
		if err != nil {
			_, status = answerOf(err)
		}
		method := c.Request().Method
		if !methodLabels[method] {
			method = "OTHER"
		}
		route := c.Path()
		if routes := m.routes.Load(); routes == nil || !(*routes)[route] {
			route = "unmatched"
		}
		code := "other"
		if status >= 100 && status <= 599 {
			code = strconv.Itoa(status)
		}
		m.requests.WithLabelValues(method, route, code).Observe(time.Since(start).Seconds())
		return err
	}
}

// setLongPolls sets what counts the long-polls waiting now.
func (m *Metrics) setLongPolls(f func() int) { m.longPolls.Store(&f) }

// setRoutes fixes the route labels to a server's routes ("METHOD path").
func (m *Metrics) setRoutes(routes []string) {
	set := map[string]bool{}
	if old := m.routes.Load(); old != nil {
		maps.Copy(set, *old)
	}
	for _, r := range routes {
		if _, path, ok := strings.Cut(r, " "); ok {
			set[path] = true
		}
	}
	m.routes.Store(&set)
}

var objectsDesc = prometheus.NewDesc("lifecyclesim_objects", "Objects by kind and state.", []string{"kind", "state"}, nil)

// objectsCollector counts objects by kind and state when scraped.
type objectsCollector struct {
	counts func(ctx context.Context) (map[[2]string]int, error)
}

func (objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (c objectsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(objectsDesc, err)
		return
	}
	for ks, n := range counts {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), ks[0], ks[1])
	}
}

// heldView is what the held-requests gauges read of a server: every tenant it serves (so each
// has its series from the start), and its holds.
type heldView struct {
	tenants []string
	holds   *holds
}

var (
	heldDesc = prometheus.NewDesc("lifecyclesim_held_requests",
		"Requests held open per tenant: long-polls (?wait=static, limit --max-waits) and dashboard event streams (limit --max-streams).",
		[]string{"tenant", "type"}, nil)
	heldLimitDesc = prometheus.NewDesc("lifecyclesim_held_requests_limit",
		"The per-tenant limit of each type of held request (--max-waits, --max-streams).", []string{"type"}, nil)
)

// heldTypes are the held requests' type labels, by their sort in holds.
var heldTypes = map[string]string{holdWait: "wait", holdStream: "stream"}

// heldCollector exports the held requests of the server the metrics serve.
type heldCollector struct{ m *Metrics }

func (heldCollector) Describe(ch chan<- *prometheus.Desc) { ch <- heldDesc; ch <- heldLimitDesc }

func (c heldCollector) Collect(ch chan<- prometheus.Metric) {
	v := c.m.held.Load()
	if v == nil {
		return
	}
	held, limits := v.holds.snapshot()
	tenants := map[string]bool{}
	for _, t := range v.tenants {
		tenants[t] = true
	}
	for k := range held { // an admin's dashboard session holds streams as no token's tenant
		tenants[k[1]] = true
	}
	for sort, typ := range heldTypes {
		ch <- prometheus.MustNewConstMetric(heldLimitDesc, prometheus.GaugeValue, float64(limits[sort]), typ)
		for t := range tenants {
			ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(held[[2]string{sort, t}]), t, typ)
		}
	}
}

var overdueDesc = prometheus.NewDesc("lifecyclesim_objects_overdue",
	"Objects in a transition whose phase was due more than 5s ago on the simulator's clock (the worker is behind or cannot advance them; counted up to 1000).", nil, nil)

// overdueCollector counts the objects overdue in a transition when scraped.
type overdueCollector struct {
	overdue func(ctx context.Context) (int, error)
}

func (overdueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- overdueDesc }

func (c overdueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.overdue(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(overdueDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(overdueDesc, prometheus.GaugeValue, float64(n))
}
