package metrics

import (
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	tclient "go.temporal.io/sdk/client"

	"github.com/weftworks/weft/activities/toolspec"
)

// Metrics is one process's registry.
type Metrics struct {
	reg *prometheus.Registry

	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	tokens       *prometheus.CounterVec
	cost         prometheus.Counter

	mu       sync.Mutex
	counters map[string]*prometheus.CounterVec
	gauges   map[string]*prometheus.GaugeVec
	timers   map[string]*prometheus.HistogramVec
	labels   map[string][]string // label names per SDK metric, fixed at first use
}

// New returns a registry with weft's metrics and the Go runtime's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), counters: map[string]*prometheus.CounterVec{},
		gauges: map[string]*prometheus.GaugeVec{}, timers: map[string]*prometheus.HistogramVec{}, labels: map[string][]string{}}
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_tool_calls_total", Help: "Tool activity executions by tool and outcome."}, []string{"tool", "status"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_tool_duration_seconds", Help: "Tool activity duration.",
		Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)}, []string{"tool"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_tokens_total", Help: "Tokens consumed by tool calls."}, []string{"kind"})
	m.cost = prometheus.NewCounter(prometheus.CounterOpts{Name: "weft_cost_usd_total", Help: "What model calls cost, from the price table."})
	m.reg.MustRegister(m.toolCalls, m.toolDuration, m.tokens, m.cost, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Serve serves /metrics on addr until the process ends; the error is the listener's.
func (m *Metrics) Serve(addr string) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// ToolCall records one tool activity execution (the activity adapter calls it).
func (m *Metrics) ToolCall(tool, status string, d time.Duration, u *toolspec.Usage) {
	m.toolCalls.WithLabelValues(tool, status).Inc()
	m.toolDuration.WithLabelValues(tool).Observe(d.Seconds())
	if u == nil {
		return
	}
	m.tokens.WithLabelValues("prompt").Add(float64(u.PromptTokens))
	m.tokens.WithLabelValues("completion").Add(float64(u.CompletionTokens))
	m.tokens.WithLabelValues("embedding").Add(float64(u.EmbeddingTokens))
	m.cost.Add(u.CostUSD)
}

// SDK is the handler the Temporal client takes (client.Options.MetricsHandler).
func (m *Metrics) SDK() tclient.MetricsHandler { return &sdkHandler{m: m} }

type sdkHandler struct {
	m    *Metrics
	tags map[string]string
}

func (h *sdkHandler) WithTags(tags map[string]string) tclient.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return &sdkHandler{m: h.m, tags: merged}
}

// labelValues maps the handler's tags onto the metric's label names, fixed at its first use:
// Prometheus needs one label set per metric name, while the SDK may add tags later.
func (h *sdkHandler) labelValues(name string) ([]string, []string) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	names, ok := h.m.labels[name]
	if !ok {
		for k := range h.tags {
			names = append(names, sanitize(k))
		}
		sort.Strings(names)
		h.m.labels[name] = names
	}
	values := make([]string, len(names))
	for i, n := range names {
		for k, v := range h.tags {
			if sanitize(k) == n {
				values[i] = v
			}
		}
	}
	return names, values
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func (h *sdkHandler) Counter(name string) tclient.MetricsCounter {
	names, values := h.labelValues(name)
	h.m.mu.Lock()
	vec, ok := h.m.counters[name]
	if !ok {
		vec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: sanitize(name), Help: "Temporal SDK metric " + name + "."}, names)
		if err := h.m.reg.Register(vec); err != nil {
			vec = nil
		}
		h.m.counters[name] = vec
	}
	h.m.mu.Unlock()
	return counterFunc(func(n int64) {
		if vec != nil {
			vec.WithLabelValues(values...).Add(float64(n))
		}
	})
}

func (h *sdkHandler) Gauge(name string) tclient.MetricsGauge {
	names, values := h.labelValues(name)
	h.m.mu.Lock()
	vec, ok := h.m.gauges[name]
	if !ok {
		vec = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: sanitize(name), Help: "Temporal SDK metric " + name + "."}, names)
		if err := h.m.reg.Register(vec); err != nil {
			vec = nil
		}
		h.m.gauges[name] = vec
	}
	h.m.mu.Unlock()
	return gaugeFunc(func(v float64) {
		if vec != nil {
			vec.WithLabelValues(values...).Set(v)
		}
	})
}

func (h *sdkHandler) Timer(name string) tclient.MetricsTimer {
	names, values := h.labelValues(name)
	h.m.mu.Lock()
	vec, ok := h.m.timers[name]
	if !ok {
		vec = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: sanitize(name) + "_seconds", Help: "Temporal SDK metric " + name + ".",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, names)
		if err := h.m.reg.Register(vec); err != nil {
			vec = nil
		}
		h.m.timers[name] = vec
	}
	h.m.mu.Unlock()
	return timerFunc(func(d time.Duration) {
		if vec != nil {
			vec.WithLabelValues(values...).Observe(d.Seconds())
		}
	})
}

type counterFunc func(int64)

func (f counterFunc) Inc(n int64) { f(n) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
