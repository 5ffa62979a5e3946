package kv

import (
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/promexport"
	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/storemetrics"
)

// metrics are pace-kv's counters, each refusal kind on its own series (pace-node §11), kept
// as atomics and exported through promexport. They render as 0 from the start.
type metrics struct {
	reg                 *promexport.Registry
	conns               atomic.Uint64
	rejected            [3]atomic.Uint64  // by frameserver.RejectReason
	closed              [16]atomic.Uint64 // by frameserver.CloseReason
	framesRefused       map[string]*atomic.Uint64
	credentialsRejected atomic.Uint64
	authThrottled       atomic.Uint64
	authConnsClosed     atomic.Uint64
	storesNotValue      atomic.Uint64
	storesForeign       atomic.Uint64
	storesFailed        atomic.Uint64
	hits, misses        atomic.Uint64
}

// frameRefusals are the pace_cache_frames_refused_<kind>_total series, each with its help.
var frameRefusals = []struct{ kind, help string }{
	{"bad_magic", "Frames refused: the first byte was not 0xFC; the connection was closed unanswered."},
	{"unsupported_version", "Frames refused: a protocol version this server does not speak."},
	{"unknown_opcode", "Frames refused: an opcode that is no verb at all."},
	{"payload_too_large", "Frames refused: a payload over the cap."},
	{"unauthenticated", "Frames refused: a verb before AUTH on a server with a password."},
	{"malformed_payload", "Frames refused: fields that do not split or decode."},
	{"endpoint_busy", "Frames refused endpoint-busy before their payload was read: the in-flight payload budget (--max-inflight) had no room."},
	{"malformed_credential", "AUTH frames refused: the kind byte names neither a password nor a machine ticket."},
	{"not_permitted", "Frames refused dispatch-not-permitted: scheduler and compile verbs, which pace-kv does not serve."},
}

func newMetrics(version string, st *store.Store) *metrics {
	m := &metrics{reg: promexport.New(), framesRefused: map[string]*atomic.Uint64{}}
	m.reg.Add(m.list(version)...)
	m.reg.Add(storemetrics.Metrics(st.Stats, "pace_kv")...)
	return m
}

func (m *metrics) list(version string) []counter.Metric {
	closed := map[string]*atomic.Uint64{}
	for _, r := range frameserver.CloseReasons {
		closed[r.String()] = &m.closed[r]
	}
	list := []counter.Metric{
		{Name: "pace_connections_total", Help: "Connections accepted.", Value: &m.conns},
		{Name: "pace_connections_rejected_total", Help: "Connections closed at once because the connection cap (--max-connections) was reached and none could be displaced.", Value: &m.rejected[frameserver.RejectedAtCapacity]},
		{Name: "pace_connections_rejected_per_address_total", Help: "Connections closed at once because their address already held --max-connections-per-address.", Value: &m.rejected[frameserver.RejectedPerAddress]},
		counter.Labelled("pace_connections_closed_total", "Connections closed, by reason.", "reason", closed),
		{Name: "pace_cache_credentials_rejected_total", Help: "AUTH attempts checked and refused.", Value: &m.credentialsRejected},
		{Name: "pace_cache_auth_throttled_total", Help: "AUTH attempts refused unchecked, and their connection closed: their address had too many failures queued.", Value: &m.authThrottled},
		{Name: "pace_cache_auth_connections_closed_total", Help: "Connections closed after their fifth failed AUTH.", Value: &m.authConnsClosed},
		{Name: "pace_cache_stores_refused_not_a_compile_value_total", Help: "STOREs refused: not a compile value.", Value: &m.storesNotValue},
		{Name: "pace_cache_stores_refused_foreign_generation_total", Help: "STOREs refused: a compile value of another generation.", Value: &m.storesForeign},
		{Name: "pace_cache_stores_failed_total", Help: "STOREs the storage failed to write.", Value: &m.storesFailed},
		{Name: "pace_kv_hits_total", Help: "FETCHes answered with a value.", Value: &m.hits},
		{Name: "pace_kv_misses_total", Help: "FETCHes answered Miss.", Value: &m.misses},
		{Name: "pace_build_info", Help: "Build information: 1, labelled with the version.", Kind: counter.Gauge,
			Labels: []string{"version"}, Samples: func() []counter.Sample {
				return []counter.Sample{{LabelValues: []string{version}, Value: 1}}
			}},
	}
	for _, r := range frameRefusals {
		n := new(atomic.Uint64)
		m.framesRefused[r.kind] = n
		list = append(list, counter.Metric{Name: "pace_cache_frames_refused_" + r.kind + "_total", Help: r.help, Value: n})
	}
	return list
}

// Observer adapts the frame server's events to the counters.
func (m *metrics) observer() frameserver.Observer { return observer{m} }

type observer struct{ m *metrics }

func (o observer) ConnAccepted() { o.m.conns.Add(1) }
func (o observer) ConnRejected(r frameserver.RejectReason) {
	if int(r) < len(o.m.rejected) {
		o.m.rejected[r].Add(1)
	}
}
func (o observer) ConnClosed(r frameserver.CloseReason) {
	if int(r) < len(o.m.closed) {
		o.m.closed[r].Add(1)
	}
}
func (o observer) Refused(k frameserver.RefusalKind) { o.m.refused(k.String()) }
func (m *metrics) refused(kind string) {
	if n := m.framesRefused[kind]; n != nil {
		n.Add(1)
	}
}
