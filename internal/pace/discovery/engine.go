package discovery

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Engine runs discovery on two UDP sockets: the shared beacon listener, which hears
// beacons and never sends, and this node's private reply socket, which sends everything
// and receives challenges and proofs. It is safe for concurrent use.
type Engine struct {
	cfg      Config
	targets  []target
	beacon   *net.UDPConn
	reply    *net.UDPConn
	counters Counters

	mu       sync.Mutex // guards everything below
	jar      jar
	spent    cookieTable
	failed   cookieTable
	guard    *guard
	nodes    table
	logs     recentLog
	sentTo   []netip.AddrPort
	lastSkip string

	selfMu sync.Mutex // guards the cached summary
	selfS  verbs.FleetSummary
	selfAt time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// selfFresh is how long this node's summary is reused for answering datagrams, so that a
// flood costs the node's state no work per datagram; every beacon round reads it anew.
const selfFresh = time.Second

// self is this node's summary, read again when older than selfFresh.
func (e *Engine) self() verbs.FleetSummary {
	e.selfMu.Lock()
	defer e.selfMu.Unlock()
	if now := e.cfg.Now(); e.selfAt.IsZero() || now.Sub(e.selfAt) >= selfFresh || now.Before(e.selfAt) {
		e.selfS, e.selfAt = e.cfg.Summary(), now
	}
	return e.selfS
}

// refreshSelf reads this node's summary now.
func (e *Engine) refreshSelf() verbs.FleetSummary {
	e.selfMu.Lock()
	defer e.selfMu.Unlock()
	e.selfS, e.selfAt = e.cfg.Summary(), e.cfg.Now()
	return e.selfS
}

// Start binds both sockets and runs discovery until ctx ends or Close is called. A
// configuration it cannot run, or a port it cannot bind, is an error before anything runs.
func Start(ctx context.Context, cfg Config) (*Engine, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: c, guard: newGuard(c.Limits), nodes: table{m: map[string]*record{}}}
	e.jar = jar{every: c.CookieEvery, rand: c.Rand}
	if e.jar.rand == nil {
		e.jar.rand = rand.Reader
	}
	for _, s := range c.Targets {
		t, err := parseTarget(s)
		if err != nil {
			return nil, errors.Join(errConfig, err)
		}
		e.targets = append(e.targets, t)
	}
	if e.beacon, err = listen(ctx, "beacon", c.BeaconPort, true); err != nil {
		return nil, err
	}
	if e.reply, err = listen(ctx, "reply", c.ReplyPort, false); err != nil {
		e.beacon.Close()
		return nil, err
	}
	ctx, e.cancel = context.WithCancel(ctx)
	e.wg.Add(4)
	go e.closeWhenDone(ctx)
	go e.readLoop(e.beacon, true)
	go e.readLoop(e.reply, false)
	go e.beaconLoop(ctx)
	e.logStart()
	return e, nil
}

func listen(ctx context.Context, which string, port int, shared bool) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return setSockopts(c, shared) }}
	pc, err := lc.ListenPacket(ctx, "udp4", net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("binding discovery's %s socket: %w", which, err)
	}
	return pc.(*net.UDPConn), nil
}

func (e *Engine) logStart() {
	self := e.refreshSelf()
	where := "the directed broadcast of every eligible interface"
	if len(e.cfg.Targets) > 0 {
		where = fmt.Sprint(e.cfg.Targets)
	}
	e.cfg.Log.Info("discovery is listening", "beacon", e.BeaconAddr(), "reply", e.ReplyAddr(),
		"cluster", self.ClusterID, "raft_endpoint", self.RaftEndpoint, "beacon_targets", where, "every", e.cfg.Interval)
}

// Close stops discovery and waits for its goroutines; the sockets are closed.
func (e *Engine) Close() {
	e.cancel()
	e.wg.Wait()
}

func (e *Engine) closeWhenDone(ctx context.Context) {
	defer e.wg.Done()
	<-ctx.Done()
	e.beacon.Close()
	e.reply.Close()
}

// BeaconAddr is the shared beacon listener's address (the wildcard and its port).
func (e *Engine) BeaconAddr() netip.AddrPort { return e.beacon.LocalAddr().(*net.UDPAddr).AddrPort() }

// ReplyAddr is the private reply socket's address: the port peers' challenges and proofs
// reach, which a host firewall must pass.
func (e *Engine) ReplyAddr() netip.AddrPort { return e.reply.LocalAddr().(*net.UDPAddr).AddrPort() }

// Targets are where the last round of beacons went.
func (e *Engine) Targets() []netip.AddrPort {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.sentTo)
}

// Peers are the members of this node's cluster that proved the key the roster holds for
// them and still do, the roster asked now.
func (e *Engine) Peers() []Peer {
	cluster := e.self().ClusterID
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nodes.peers(cluster, e.cfg.Roster)
}

// Heard lists every node in the table, proven or not: a node heard and never
// authenticated is what a blocked reply port looks like from here.
func (e *Engine) Heard() []Heard {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nodes.list()
}

// Counters are the engine's counts.
func (e *Engine) Counters() *Counters { return &e.counters }

// Metrics lists the counters and the gauge of peers authenticated, for the node's exporter.
func (e *Engine) Metrics() []counter.Metric {
	return append(e.counters.Metrics(), counter.GaugeFunc("pace_discovery_peers_authenticated",
		"Members of this cluster currently authenticated by a discovery proof.", func() float64 {
			e.mu.Lock()
			defer e.mu.Unlock()
			return float64(e.nodes.authenticated())
		}))
}

func (e *Engine) readLoop(conn *net.UDPConn, beaconSocket bool) {
	defer e.wg.Done()
	buf := make([]byte, discoverywire.MaxDatagram+1) // one more: a longer datagram shows as too long
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue // an ICMP error surfaced on the socket (Windows): nothing to read
		}
		e.receive(buf[:n], netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), beaconSocket)
	}
}

// receive routes one datagram: beacons on the beacon socket, challenges and proofs on the
// reply socket, anything else dropped without a reply.
func (e *Engine) receive(b []byte, from netip.AddrPort, beaconSocket bool) {
	d, err := discoverywire.Parse(b)
	switch {
	case errors.Is(err, discoverywire.ErrOtherVersion):
		e.counters.OtherVersion.Add(1)
	case err != nil:
		e.counters.Malformed.Add(1)
	case beaconSocket && d.Kind == discoverywire.KindBeacon:
		e.onBeacon(d.Beacon, from, len(b))
	case !beaconSocket && d.Kind == discoverywire.KindChallenge:
		e.onChallenge(d.Challenge, from, len(b))
	case !beaconSocket && d.Kind == discoverywire.KindProof:
		e.onProof(d.Proof, from)
	default:
		e.counters.Malformed.Add(1)
	}
}

func (e *Engine) send(b []byte, to netip.AddrPort) bool {
	if _, err := e.reply.WriteToUDPAddrPort(b, to); err != nil {
		e.counters.SendErrors.Add(1)
		if e.logDue("send " + to.String()) {
			e.cfg.Log.Warn("discovery could not send", "to", to, "err", err)
		}
		return false
	}
	return true
}

func (e *Engine) logDue(key string) bool {
	now := e.cfg.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.logs.due(key, now)
}
