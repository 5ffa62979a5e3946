package discovery

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
)

func TestForeignProofReachesFormation(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	a := startNode(t, "a1", "red", []string{b.beaconTarget()}, nil)
	p := receive(t, b.foreign, "a proven summary of the other cluster")
	if p.Summary.NodeID != "a1" || p.Summary.ClusterID != "red" || !bytes.Equal(p.Key, a.key.Public()) ||
		p.From != a.replyOn("127.0.0.1") {
		t.Errorf("handed over %+v", p)
	}
	// An unchanged beacon from the same address is not challenged again.
	waitFor(t, "more beacons heard", func() bool { return b.Counters().BeaconsHeard.Load() >= 5 })
	if n := b.Counters().ChallengesSent.Load(); n != 1 {
		t.Errorf("%d challenges for one unchanged beacon", n)
	}
	if n := b.Counters().ForeignProofs.Load(); n != 1 || len(b.Peers()) != 0 {
		t.Errorf("%d foreign proofs, peers %v", n, b.Peers())
	}
	if c := a.Counters(); c.ChallengesReceived.Load() != 1 || c.ProofsSent.Load() != 1 || c.BeaconsSent.Load() < 5 {
		t.Errorf("the prover counted %d challenges, %d proofs, %d beacons", c.ChallengesReceived.Load(), c.ProofsSent.Load(), c.BeaconsSent.Load())
	}
	if got := a.Targets(); len(got) != 1 || got[0].String() != b.beaconTarget() {
		t.Errorf("targets %v", got)
	}
}

func TestMemberWithItsRosterKeyIsAuthenticated(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	b.roster.admit("a1", keyFor(t, "a1").Public())
	a := startNode(t, "a1", "blue", []string{b.beaconTarget()}, nil)
	p := receive(t, b.peers, "an authenticated peer")
	if p.NodeID != "a1" || p.ClusterID != "blue" || p.Addr != a.replyOn("127.0.0.1") || !bytes.Equal(p.Key, a.key.Public()) ||
		p.NodeEndpoint != "127.0.0.1:6674" || p.RaftEndpoint != "127.0.0.1:6680" {
		t.Errorf("reported %+v", p)
	}
	if peers := b.Peers(); len(peers) != 1 || peers[0].NodeID != "a1" {
		t.Errorf("Peers() = %+v", peers)
	}
	if got := gauge(t, b.Engine, "pace_discovery_peers_authenticated"); got != 1 {
		t.Errorf("gauge %v", got)
	}
	if b.Counters().ProofsAccepted.Load() != 1 || !strings.Contains(b.log.String(), "a member proved its key") {
		t.Errorf("accepted %d; log %s", b.Counters().ProofsAccepted.Load(), b.log)
	}
	// A revocation takes effect at the next listing, without waiting for a proof.
	b.roster.revoke(a.key.Public())
	if peers := b.Peers(); len(peers) != 0 {
		t.Errorf("a revoked peer is still listed: %+v", peers)
	}
}

func TestUnknownKeyIsCountedAndLoggedWithTheAdmitLine(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	b.roster.admit("a1", keyFor(t, "someone else").Public())
	a := startNode(t, "a1", "blue", []string{b.beaconTarget()}, nil)
	// Refused proofs are not remembered: every beacon is challenged again, so it climbs.
	waitFor(t, "unknown-key refusals", func() bool { return b.Counters().RefusedUnknownKey.Load() >= 3 })
	text := edkey.Text(a.key.Public())
	line := "--cluster-admit=a1=127.0.0.1:6680@" + text
	if n := b.log.count(line); n != 1 {
		t.Errorf("the admit line is logged %d times within a minute, want 1:\n%s", n, b.log)
	}
	if !strings.Contains(b.log.String(), "node=a1") || !strings.Contains(b.log.String(), "addr="+a.replyOn("127.0.0.1").String()) {
		t.Errorf("the warning names neither the node nor its address:\n%s", b.log)
	}
	if len(b.peers) != 0 || len(b.Peers()) != 0 || b.Counters().ProofsAccepted.Load() != 0 {
		t.Error("a node under an unknown key was authenticated")
	}
}

func TestRevokedKeyIsRefused(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	b.roster.admit("a1", keyFor(t, "a1").Public())
	b.roster.revoke(keyFor(t, "a1").Public())
	startNode(t, "a1", "blue", []string{b.beaconTarget()}, nil)
	waitFor(t, "revoked-key refusals", func() bool { return b.Counters().RefusedRevokedKey.Load() >= 2 })
	if len(b.peers) != 0 || b.Counters().RefusedUnknownKey.Load() != 0 || b.Counters().ProofsAccepted.Load() != 0 {
		t.Error("a revoked key was authenticated or counted as unknown")
	}
}

func TestForgedProofIsCountedAndIgnored(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	forger := newRawPeer(t, "127.0.0.1")
	victim := keyFor(t, "v1")
	b.roster.admit("v1", victim.Public())
	s := summaryOf("v1", "blue", "127.0.0.1:6674")
	c, replyAt := forger.challengeFor(b, s)
	if replyAt != b.replyOn("127.0.0.1") {
		t.Errorf("challenged from %v, not the reply socket %v", replyAt, b.ReplyAddr())
	}
	// The victim's key with the forger's signature: it must not verify.
	p := discoverywire.SignProof(keyFor(t, "forger"), c, s)
	p.Key = victim.Public()
	for range 3 {
		forger.send(discoverywire.AppendProof(nil, p), replyAt)
	}
	waitFor(t, "three proofs handled", func() bool {
		return b.Counters().RefusedForged.Load()+b.Counters().ChecksWithheld.Load() == 3
	})
	if f, w := b.Counters().RefusedForged.Load(), b.Counters().ChecksWithheld.Load(); f != 2 || w != 1 {
		t.Errorf("forged %d, withheld %d: a cookie pays for two failed checks", f, w)
	}
	if len(b.peers) != 0 || len(b.Peers()) != 0 || len(b.foreign) != 0 {
		t.Error("a forged proof was believed")
	}
	logged := b.log.String()
	if !strings.Contains(logged, "signature does not verify") || strings.Contains(logged, "v1") {
		t.Errorf("a forgery is logged by address only:\n%s", logged)
	}
}

func TestUnsolicitedAndReplayedProofsAreRefusedUnchecked(t *testing.T) {
	b := startNode(t, "b1", "blue", nil, nil)
	peer := newRawPeer(t, "127.0.0.1")
	key := keyFor(t, "p1")
	b.roster.admit("p1", key.Public())
	s := summaryOf("p1", "blue", "127.0.0.1:6674")
	invented := discoverywire.Challenge{Cookie: Cookie{1, 2, 3}, ClusterID: "blue"}
	peer.send(discoverywire.AppendProof(nil, discoverywire.SignProof(key, invented, s)), b.replyOn("127.0.0.1"))
	waitFor(t, "an unsolicited proof", func() bool { return b.Counters().ProofsUnsolicited.Load() == 1 })

	c, replyAt := peer.challengeFor(b, s)
	genuine := discoverywire.AppendProof(nil, discoverywire.SignProof(key, c, s))
	peer.send(genuine, replyAt)
	receive(t, b.peers, "the genuine proof accepted")
	peer.send(genuine, replyAt)
	waitFor(t, "the replay refused", func() bool { return b.Counters().ProofsUnsolicited.Load() == 2 })

	other := newRawPeer(t, "127.0.0.1") // the right cookie from another address
	s.MemberTotal++                     // a changed summary is challenged again
	c2, _ := peer.challengeFor(b, s)
	other.send(discoverywire.AppendProof(nil, discoverywire.SignProof(key, c2, s)), replyAt)
	waitFor(t, "a cookie used from another address", func() bool { return b.Counters().ProofsUnsolicited.Load() == 3 })
	if b.Counters().RefusedForged.Load() != 0 || b.Counters().ProofsAccepted.Load() != 1 {
		t.Errorf("forged %d, accepted %d", b.Counters().RefusedForged.Load(), b.Counters().ProofsAccepted.Load())
	}
}

// A firewall that passes the beacon port and drops the reply port: the relay forwards the
// prover's beacons and drops what comes back, so beacons are heard and challenged, and no
// proof ever arrives.
func TestBlockedReplyPortShowsAsHeardNeverAuthenticated(t *testing.T) {
	generous := func(c *Config) { c.Limits.RepliesPerSource = Rate{Every: testInterval / 4, Burst: 100} }
	b := startNode(t, "b1", "blue", nil, generous)
	relay := newRawPeer(t, "127.0.0.1")
	b.roster.admit("a1", keyFor(t, "a1").Public())
	a := startNode(t, "a1", "blue", []string{relay.addr().String()}, nil)
	go forwardBeacons(relay, netip.MustParseAddrPort(b.beaconTarget()))
	waitFor(t, "beacons heard and challenged", func() bool {
		return b.Counters().BeaconsHeard.Load() >= 5 && b.Counters().ChallengesSent.Load() >= 5
	})
	if c := b.Counters(); c.ProofsReceived.Load() != 0 || len(b.Peers()) != 0 {
		t.Errorf("proofs received %d, peers %v", c.ProofsReceived.Load(), b.Peers())
	}
	heard := b.Heard()
	if len(heard) != 1 || heard[0].NodeID != "a1" || heard[0].Authenticated || !heard[0].ProvenAt.IsZero() {
		t.Errorf("heard %+v", heard)
	}
	if a.Counters().ChallengesReceived.Load() != 0 {
		t.Error("a challenge got through the relay")
	}
}

// forwardBeacons relays every datagram it reads to the beacon port, and sends nothing back.
func forwardBeacons(relay *rawPeer, to netip.AddrPort) {
	buf := make([]byte, discoverywire.MaxDatagram+1)
	for {
		n, _, err := relay.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if d, err := discoverywire.Parse(buf[:n]); err == nil && d.Kind == discoverywire.KindBeacon {
			_, _ = relay.conn.WriteToUDPAddrPort(buf[:n], to)
		}
	}
}

func gauge(t *testing.T, e *Engine, name string) float64 {
	t.Helper()
	for _, m := range e.Metrics() {
		if m.Name == name {
			return m.Read()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
