package proxy

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpdrift/mcpdrift/mcpwire"
)

// Metrics are the gateway's Prometheus metrics, on a registry of their
// own (so several gateways, or tests, never collide). A nil *Metrics
// records nothing.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	refusals *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	served   prometheus.Gauge
	hidden   prometheus.Gauge
	relists  *prometheus.CounterVec
	upErrors *prometheus.CounterVec
	sessions prometheus.Gauge
}

// NewMetrics registers the gateway's metrics on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpdrift_proxy_requests_total",
		Help: "Downstream messages by method and what the gateway did (forwarded, served, allow, deny, refused, withheld, upstream_error)."}, []string{"method", "decision"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpdrift_proxy_refused_calls_total",
		Help: "tools/call requests the gateway refused (or would refuse, in audit mode: audit_*), by reason code."}, []string{"reason"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpdrift_proxy_upstream_latency_seconds",
		Help: "Upstream exchange latency by method.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"method"})
	m.served = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpdrift_proxy_tools_served", Help: "Tools served by the latest gating."})
	m.hidden = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpdrift_proxy_tools_hidden", Help: "Tools hidden by the latest gating."})
	m.relists = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpdrift_proxy_reobservations_total",
		Help: "Re-observations of the upstream's list, by trigger."}, []string{"trigger"})
	m.upErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpdrift_proxy_upstream_errors_total",
		Help: "Upstream failures by kind (transport, timeout, stream, oversized, or the HTTP status)."}, []string{"kind"})
	m.sessions = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpdrift_proxy_sessions", Help: "Open downstream sessions."})
	m.reg.MustRegister(m.requests, m.refusals, m.latency, m.served, m.hidden, m.relists, m.upErrors, m.sessions)
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the registry the metrics are on (for tests and embedding).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) request(method, decision string) {
	if m != nil {
		m.requests.WithLabelValues(methodLabel(method), decision).Inc()
	}
}

func (m *Metrics) refused(reason string) {
	if m != nil {
		m.refusals.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) upstreamLatency(method string, d time.Duration) {
	if m != nil {
		m.latency.WithLabelValues(methodLabel(method)).Observe(d.Seconds())
	}
}

func (m *Metrics) tools(served, hidden int) {
	if m != nil {
		m.served.Set(float64(served))
		m.hidden.Set(float64(hidden))
	}
}

func (m *Metrics) relist(trigger string) {
	if m != nil {
		m.relists.WithLabelValues(trigger).Inc()
	}
}

func (m *Metrics) upstreamError(kind string) {
	if m != nil {
		m.upErrors.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) sessionOpened() {
	if m != nil {
		m.sessions.Inc()
	}
}

func (m *Metrics) sessionClosed() {
	if m != nil {
		m.sessions.Dec()
	}
}

// methodLabel bounds the method label to the specification's methods
// (mcpwire's table): a client cannot grow the metric set without bound by
// inventing method names.
func methodLabel(m string) string {
	if _, ok := mcpwire.LookupMethod(m); ok || m == "" {
		return m
	}
	return "other"
}
