package simulator

import (
	"context"
	"strconv"
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
	requests    *prometheus.HistogramVec
}

// NewMetrics registers the metrics; objects are counted from the store on each scrape.
func NewMetrics(store Store) *Metrics {
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
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lifecyclesim_http_request_duration_seconds",
			Help:    "HTTP request latency by method, route and status code.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"method", "route", "code"}),
	}
	m.Registry.MustRegister(m.transitions, m.violations, m.requests, objectsCollector{store: store},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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

// middleware observes request latency.
func (m *Metrics) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		status := c.Response().Status
		if err != nil {
			_, status = answerOf(err)
		}
		m.requests.WithLabelValues(c.Request().Method, c.Path(), strconv.Itoa(status)).Observe(time.Since(start).Seconds())
		return err
	}
}

var objectsDesc = prometheus.NewDesc("lifecyclesim_objects", "Objects by kind and state.", []string{"kind", "state"}, nil)

// objectsCollector counts objects by kind and state when scraped.
type objectsCollector struct{ store Store }

func (objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (c objectsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.store.Counts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(objectsDesc, err)
		return
	}
	for ks, n := range counts {
		ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), ks[0], ks[1])
	}
}
