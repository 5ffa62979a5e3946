package kv

import (
	"github.com/buildfleet/buildfleet/internal/pace/storemetrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// metrics are pace-kv's counters, each refusal kind on its own series (pace-node §11). They
// render as 0 from the start.
type metrics struct {
	reg                  *prometheus.Registry
	conns, connsRejected prometheus.Counter
	closed               *prometheus.CounterVec
	framesRefused        map[string]prometheus.Counter
	credentialsRejected  prometheus.Counter
	storesNotValue       prometheus.Counter
	storesForeign        prometheus.Counter
	storesFailed         prometheus.Counter
	hits, misses         prometheus.Counter
}

// frameRefusals are the pace_cache_frames_refused_<kind>_total series.
var frameRefusals = []string{"bad_magic", "unsupported_version", "unknown_opcode", "payload_too_large",
	"unauthenticated", "malformed_payload", "malformed_credential", "not_permitted"}

func newMetrics(version string, st *store.Store) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), framesRefused: map[string]prometheus.Counter{}}
	c := func(name, help string) prometheus.Counter {
		ctr := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
		m.reg.MustRegister(ctr)
		return ctr
	}
	m.conns = c("pace_connections_total", "Connections accepted.")
	m.connsRejected = c("pace_connections_rejected_total", "Connections closed at once because the connection cap was reached.")
	m.closed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pace_connections_closed_total",
		Help: "Connections closed, by reason."}, []string{"reason"})
	m.reg.MustRegister(m.closed)
	for _, k := range frameRefusals {
		m.framesRefused[k] = c("pace_cache_frames_refused_"+k+"_total", "Frames refused: "+k+".")
	}
	m.credentialsRejected = c("pace_cache_credentials_rejected_total", "AUTH attempts refused.")
	m.storesNotValue = c("pace_cache_stores_refused_not_a_compile_value_total", "STOREs refused: not a compile value.")
	m.storesForeign = c("pace_cache_stores_refused_foreign_generation_total", "STOREs refused: a compile value of another generation.")
	m.storesFailed = c("pace_cache_stores_failed_total", "STOREs the storage failed to write.")
	m.hits = c("pace_kv_hits_total", "FETCHes answered with a value.")
	m.misses = c("pace_kv_misses_total", "FETCHes answered Miss.")
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pace_build_info", Help: "Build information."}, []string{"version"})
	info.WithLabelValues(version).Set(1)
	m.reg.MustRegister(info, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(storemetrics.New(st.Stats, "pace_kv"))
	return m
}

// Observer adapts the frame server's events to the counters.
func (m *metrics) observer() frameserver.Observer { return observer{m} }

type observer struct{ m *metrics }

func (o observer) ConnAccepted()                        { o.m.conns.Inc() }
func (o observer) ConnRejected()                        { o.m.connsRejected.Inc() }
func (o observer) ConnClosed(r frameserver.CloseReason) { o.m.closed.WithLabelValues(r.String()).Inc() }
func (o observer) Refused(k frameserver.RefusalKind)    { o.m.refused(k.String()) }
func (m *metrics) refused(kind string)                  { m.framesRefused[kind].Inc() }
