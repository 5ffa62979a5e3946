package discovery

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
)

func tight(c *Config) {
	c.Limits.ChecksPerHost = Rate{Every: time.Hour, Burst: 3}
	c.Limits.RepliesPerSource = Rate{Every: time.Hour, Burst: 4}
}

// A flood from one host is withheld by its budgets while a polite peer on another host
// still proves itself: beacons from ever-new node ids, then forged proofs.
func TestFloodsAreWithheldWhileAPolitePeerGetsThrough(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, tight)
	flooder := newRawPeer(t, "127.0.0.2")
	target := netip.MustParseAddrPort(b.beaconTarget())
	// In batches the socket buffer holds: a dropped datagram would prove nothing here.
	for i := range 100 {
		flooder.send(discoverywire.AppendBeacon(nil, summaryOf("f"+strconv.Itoa(i), "blue", "127.0.0.2:6674")), target)
		if i%20 == 19 {
			waitFor(t, "the beacon flood handled", func() bool { return b.Counters().BeaconsHeard.Load() == uint64(i+1) })
		}
	}
	if sent, held := b.Counters().ChallengesSent.Load(), b.Counters().RepliesWithheld.Load(); sent != 4 || held != 96 {
		t.Errorf("challenged %d, withheld %d: the source's budget is 4", sent, held)
	}
	// Forged proofs against the four cookies it got (challenged in order, f0 to f3): three
	// checks for its host, then none.
	for i := range 4 {
		d, from, _ := flooder.read()
		p := discoverywire.SignProof(keyFor(t, "forger"), d.Challenge, summaryOf("f"+strconv.Itoa(i), "blue", "127.0.0.2:6674"))
		p.Signature[0] ^= 1
		flooder.send(discoverywire.AppendProof(nil, p), from)
	}
	waitFor(t, "the forged proofs handled", func() bool {
		c := b.Counters()
		return c.RefusedForged.Load()+c.ChecksWithheld.Load()+c.ProofsUnsolicited.Load() == 4
	})
	if f, w := b.Counters().RefusedForged.Load(), b.Counters().ChecksWithheld.Load(); f != 3 || w != 1 {
		t.Errorf("forged %d, withheld %d: the host's budget is three checks", f, w)
	}
	startNode(t, "a1", "red", []string{b.beaconTarget()}, tight)
	if p := receive(t, b.foreign, "the polite peer's proof"); p.Summary.NodeID != "a1" {
		t.Errorf("proven %+v", p.Summary)
	}
}

// A challenge flood at a prover: it answers its budget and no more, and still proves
// itself to a polite challenger.
func TestChallengeFloodIsWithheld(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, tight)
	flooder := newRawPeer(t, "127.0.0.2")
	a := startNode(t, "a1", "red", []string{b.beaconTarget()}, tight)
	c := discoverywire.Challenge{ClusterID: "blue"}
	big, _ := discoverywire.AppendChallenge(nil, c, discoverywire.MaxDatagram)
	for i := range 20 {
		flooder.send(big, a.replyOn("127.0.0.1"))
		if i%10 == 9 {
			waitFor(t, "the challenge flood handled", func() bool { return a.Counters().ChallengesReceived.Load() >= uint64(i+1) })
		}
	}
	p := receive(t, b.foreign, "the polite peer's proof")
	if p.Summary.NodeID != "a1" {
		t.Errorf("proven %+v", p.Summary)
	}
	waitFor(t, "16 of 20 flooded challenges withheld (the source's budget is 4)", func() bool {
		return a.Counters().RepliesWithheld.Load() == 16
	})
}

// A proof is never sent larger than the challenge that asked for it.
func TestProofNeverOutgrowsItsChallenge(t *testing.T) {
	a := startNode(t, "a1", "red", nil, nil)
	asker := newRawPeer(t, "127.0.0.1")
	c := discoverywire.Challenge{ClusterID: "blue"}
	small, err := discoverywire.AppendChallenge(nil, c, discoverywire.HeaderLen+60)
	if err != nil {
		t.Fatal(err)
	}
	asker.send(small, a.replyOn("127.0.0.1"))
	waitFor(t, "the small challenge withheld", func() bool { return a.Counters().RepliesWithheld.Load() == 1 })
	if a.Counters().ProofsSent.Load() != 0 {
		t.Error("a proof larger than its challenge was sent")
	}
	// The same challenge at the beacon's length is answered, at exactly that length.
	beaconLen := len(discoverywire.AppendBeacon(nil, *a.summary.Load()))
	fits, _ := discoverywire.AppendChallenge(nil, c, beaconLen)
	asker.send(fits, a.replyOn("127.0.0.1"))
	d, _, n := asker.read()
	if d.Kind != discoverywire.KindProof || n != beaconLen || !d.Proof.Verify("blue") {
		t.Errorf("answered with a %d-byte %s for a %d-byte challenge", n, d.Kind, beaconLen)
	}
}

func TestOtherVersionsAndStrayDatagramsAreDroppedSilently(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	peer := newRawPeer(t, "127.0.0.1")
	beacon := discoverywire.AppendBeacon(nil, summaryOf("p1", "blue", "127.0.0.1:6674"))
	v2 := slices.Clone(beacon)
	v2[4] = 2
	peer.send(v2, netip.MustParseAddrPort(b.beaconTarget()))
	peer.send([]byte("GET / HTTP/1.1\r\n"), netip.MustParseAddrPort(b.beaconTarget()))
	peer.send(beacon, b.replyOn("127.0.0.1")) // a beacon at the reply port
	challenge, _ := discoverywire.AppendChallenge(nil, discoverywire.Challenge{ClusterID: "x"}, len(beacon))
	peer.send(challenge, netip.MustParseAddrPort(b.beaconTarget())) // a challenge at the beacon port
	waitFor(t, "all four dropped", func() bool {
		return b.Counters().OtherVersion.Load() == 1 && b.Counters().Malformed.Load() == 3
	})
	c := b.Counters()
	if c.BeaconsHeard.Load()+c.ChallengesReceived.Load()+c.ChallengesSent.Load()+c.ProofsSent.Load() != 0 {
		t.Error("a dropped datagram was answered or counted as heard")
	}
	if strings.Contains(b.log.String(), "version") {
		t.Errorf("another version was logged:\n%s", b.log)
	}
}

// A peer that moves its endpoint is re-proved, and reported again at the new one.
func TestEndpointMoveIsReproved(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	b.roster.admit("a1", keyFor(t, "a1").Public())
	a := startNode(t, "a1", "blue", []string{b.beaconTarget()}, nil)
	if p := receive(t, b.peers, "the first proof"); p.NodeEndpoint != "127.0.0.1:6674" {
		t.Fatalf("reported %+v", p)
	}
	a.setSummary(summaryOf("a1", "blue", "127.0.0.9:6674"))
	if p := receive(t, b.peers, "the proof at the new endpoint"); p.NodeEndpoint != "127.0.0.9:6674" || p.RaftEndpoint != "127.0.0.9:6680" {
		t.Fatalf("reported %+v", p)
	}
	if !strings.Contains(b.log.String(), "not authenticated until it proves again") {
		t.Errorf("the lost status was not logged:\n%s", b.log)
	}
	if peers := b.Peers(); len(peers) != 1 || peers[0].NodeEndpoint != "127.0.0.9:6674" {
		t.Errorf("Peers() = %+v", peers)
	}
}

func TestNoEligibleInterfaceIsLoggedOnce(t *testing.T) {
	var rounds atomic.Int64
	n := startNode(t, "n1", "blue", nil, func(c *Config) {
		c.Interfaces = func() ([]Interface, error) {
			rounds.Add(1)
			return []Interface{{Name: "lo", Flags: net.FlagUp | net.FlagLoopback}}, nil
		}
	})
	waitFor(t, "five beacon rounds", func() bool { return rounds.Load() >= 5 })
	if c := n.log.count("no interface to beacon on"); c != 1 || n.log.count("lo: loopback") != 1 {
		t.Errorf("logged %d times:\n%s", c, n.log)
	}
	if n.Counters().BeaconsSent.Load() != 0 || len(n.Targets()) != 0 {
		t.Error("beaconed with no target")
	}
}

func TestStartRefusesWhatCannotRun(t *testing.T) {
	ok := startNode(t, "n1", "blue", nil, nil)
	for name, mod := range map[string]func(*Config){
		"no key":            func(c *Config) { c.Key = nil },
		"an IPv6 target":    func(c *Config) { c.Targets = []string{"[::1]:6681"} },
		"a port out of use": func(c *Config) { c.ReplyPort = 70000 },
		"a reply port held": func(c *Config) { c.ReplyPort = int(ok.ReplyAddr().Port()) },
	} {
		cfg := ok.cfg
		mod(&cfg)
		if e, err := Start(t.Context(), cfg); err == nil {
			e.Close()
			t.Errorf("%s: started", name)
		}
	}
	// The beacon port is shared by every node on the host.
	cfg := ok.cfg
	cfg.BeaconPort = int(ok.BeaconAddr().Port())
	e, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("a second node on the beacon port: %v", err)
	}
	e.Close()
	if _, err := e.reply.WriteToUDPAddrPort([]byte("x"), ok.replyOn("127.0.0.1")); err == nil {
		t.Error("Close left the reply socket open")
	}
}

func TestMetricsCarryTheNamesOperatorsLookFor(t *testing.T) {
	n := startNode(t, "n1", "blue", nil, nil)
	var names []string
	for _, m := range n.Metrics() {
		if slices.Contains(names, m.Name) || !strings.HasPrefix(m.Name, "pace_discovery_") || m.Help == "" {
			t.Errorf("%q: duplicate, misnamed or without help", m.Name)
		}
		names = append(names, m.Name)
	}
	for _, want := range []string{
		"pace_discovery_proofs_refused_unknown_key_total", "pace_discovery_proofs_refused_revoked_key_total",
		"pace_discovery_proofs_refused_forged_total", "pace_discovery_beacons_over_bound_total",
		"pace_discovery_replies_withheld_total", "pace_discovery_proof_checks_withheld_total",
		"pace_discovery_beacons_heard_total", "pace_discovery_challenges_sent_total", "pace_discovery_proofs_received_total",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s", want)
		}
	}
}
