package discovery

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

const testInterval = 20 * time.Millisecond

// roster is an editable roster, safe for the engine's goroutines.
type roster struct {
	mu      sync.Mutex
	keys    map[string]ed25519.PublicKey
	revoked map[string]bool
}

func newRoster() *roster {
	return &roster{keys: map[string]ed25519.PublicKey{}, revoked: map[string]bool{}}
}

func (r *roster) MemberKey(id string) (ed25519.PublicKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[id]
	return k, ok
}

func (r *roster) Revoked(key ed25519.PublicKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revoked[string(key)]
}

func (r *roster) admit(id string, key ed25519.PublicKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[id] = key
}

func (r *roster) revoke(key ed25519.PublicKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked[string(key)] = true
}

// logBuf collects an engine's log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuf) count(s string) int { return strings.Count(l.String(), s) }

func keyFor(t testing.TB, id string) *identity.Key {
	seed := sha256.Sum256([]byte(id))
	k, err := identity.NewKey(bytes.NewReader(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// node is one engine under test with its identity, summary, roster and what it was told.
type node struct {
	*Engine
	key     *identity.Key
	summary atomic.Pointer[verbs.FleetSummary]
	roster  *roster
	peers   chan Peer
	foreign chan Proven
	log     *logBuf
}

// startNode runs an engine on loopback with kernel-chosen ports. Without targets it
// beacons nowhere (no interface is eligible), so it only listens and answers.
func startNode(t *testing.T, id, cluster string, targets []string, mod func(*Config)) *node {
	t.Helper()
	n := &node{key: keyFor(t, id), roster: newRoster(), peers: make(chan Peer, 256), foreign: make(chan Proven, 256), log: &logBuf{}}
	s := summaryOf(id, cluster, "127.0.0.1:6674")
	n.summary.Store(&s)
	cfg := Config{
		Key: n.key, Summary: func() verbs.FleetSummary { return *n.summary.Load() }, Roster: n.roster,
		OnPeer:     func(p Peer) { offer(n.peers, p) },
		OnForeign:  func(p Proven) { offer(n.foreign, p) },
		Targets:    targets,
		Interval:   testInterval,
		Log:        slog.New(slog.NewTextHandler(n.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Interfaces: func() ([]Interface, error) { return nil, nil },
	}
	if mod != nil {
		mod(&cfg)
	}
	e, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	n.Engine = e
	return n
}

func offer[T any](c chan T, v T) {
	select {
	case c <- v:
	default:
	}
}

func (n *node) setSummary(s verbs.FleetSummary) { n.summary.Store(&s) }

// beaconTarget is where another node sends beacons to reach n: its port on loopback.
func (n *node) beaconTarget() string {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), n.BeaconAddr().Port()).String()
}

func (n *node) replyOn(ip string) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr(ip), n.ReplyAddr().Port())
}

// waitFor polls cond until it holds, failing after a bound far beyond what it needs.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func receive[T any](t *testing.T, c chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// rawPeer is a hand-driven UDP socket: a forger, a flooder, or a firewall.
type rawPeer struct {
	t    *testing.T
	conn *net.UDPConn
}

func newRawPeer(t *testing.T, ip string) *rawPeer {
	t.Helper()
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), 0)))
	if err != nil {
		t.Skipf("cannot bind %s on this host: %v", ip, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t: t, conn: c}
}

func (p *rawPeer) addr() netip.AddrPort { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (p *rawPeer) send(b []byte, to netip.AddrPort) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(b, to); err != nil {
		p.t.Fatal(err)
	}
}

// read returns the next datagram, parsed, and where it came from.
func (p *rawPeer) read() (discoverywire.Datagram, netip.AddrPort, int) {
	p.t.Helper()
	buf := make([]byte, discoverywire.MaxDatagram+1)
	_ = p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, from, err := p.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		p.t.Fatal(err)
	}
	d, err := discoverywire.Parse(buf[:n])
	if err != nil {
		p.t.Fatalf("a datagram the engine sent does not parse: %v", err)
	}
	return d, from, n
}

// challengeFor beacons summary s from p to n and returns the challenge n answers with.
func (p *rawPeer) challengeFor(n *node, s verbs.FleetSummary) (discoverywire.Challenge, netip.AddrPort) {
	p.t.Helper()
	p.send(discoverywire.AppendBeacon(nil, s), netip.MustParseAddrPort(n.beaconTarget()))
	d, from, _ := p.read()
	if d.Kind != discoverywire.KindChallenge {
		p.t.Fatalf("answered a beacon with a %s", d.Kind)
	}
	return d.Challenge, from
}
