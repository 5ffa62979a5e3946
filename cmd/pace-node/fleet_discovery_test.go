package main

import (
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/netlab"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// TestDiscoveryOnASegment: machines on one segment with nothing configured but discovery
// (beacons to every interface's broadcast, the default). A fresh machine finds the running
// fleet, asks to join and, approved with --enroll-approve, becomes a learner whose build leases
// a worker on another machine. A machine pinned to another --fleet-id ignores the fleet; a
// forged proof is counted and ignored; a machine whose reply port is blocked shows the
// documented symptom — it hears beacons and sends challenges, and no proof ever reaches it.
func TestDiscoveryOnASegment(t *testing.T) {
	_, hosts := netlab.ForTest(t, "v1", "fresh", "pinned", "walled", "forger", "fresh2")
	v1, fresh, pinned, walled := newMachine(t, hosts[0]), newMachine(t, hosts[1]), newMachine(t, hosts[2]), newMachine(t, hosts[3])
	fresh2 := newMachine(t, hosts[5])
	v1.start("--slots=2", "--discovery=auto")
	time.Sleep(1100 * time.Millisecond) // a later creation second: the others are the younger clusters
	if err := walled.host.BlockUDPPort(7681); err != nil {
		t.Fatal(err)
	}
	walled.start("--slots=0", "--discovery=auto", "--discovery-reply-port=7681")
	pinned.start("--slots=0", "--discovery=auto", "--fleet-id=00000000000000000000000000000001@"+v1.key)
	fresh.start("--slots=0", "--discovery=auto")
	fresh2.start("--slots=0", "--discovery=auto") // of two clusters of one started together, one may ask the other first

	eventually(t, "both fresh machines on the leader's enrollment list", 90*time.Second, func() (bool, string) {
		out := v1.operator("--scheduler="+v1.addr(), "--enroll-list")
		return strings.Contains(out, "--enroll-approve=fresh@"+fresh.key) && strings.Contains(out, "--enroll-approve=fresh2@"+fresh2.key),
			out + fresh.logText() + fresh2.logText()
	})
	admit(t, v1, "--enroll-approve=fresh@"+fresh.key)
	eventually(t, "the fresh machine a learner of v1's fleet", time.Minute, func() (bool, string) {
		return fresh.metric("pace_formation_joins_total") == 1 && strings.Contains(v1.status(), "fresh "), fresh.logText()
	})
	t.Run("the learner's build leases a worker on another machine", func(t *testing.T) {
		compileLeased(t, fresh, v1)
	})
	t.Run("a forged proof is counted and ignored", func(t *testing.T) {
		forgeAProof(t, hosts[4], v1)
	})
	t.Run("a machine pinned to another fleet ignores this one", func(t *testing.T) {
		eventually(t, "the pin's refusals counted", 30*time.Second, func() (bool, string) {
			return pinned.metric("pace_formation_yields_refused_pin_total") > 0, pinned.logText()
		})
		if n := pinned.metric("pace_formation_yields_total"); n != 0 {
			t.Fatalf("the pinned machine yielded %v times", n)
		}
	})
	t.Run("a blocked reply port: beacons heard and challenges sent, no proof received", func(t *testing.T) {
		eventually(t, "walled to hear beacons and challenge them", 30*time.Second, func() (bool, string) {
			return walled.metric("pace_discovery_beacons_heard_total") > 0 && walled.metric("pace_discovery_challenges_sent_total") > 0,
				walled.logText()
		})
		for name, want := range map[string]float64{"pace_discovery_proofs_received_total": 0, "pace_formation_yields_total": 0} {
			if n := walled.metric(name); n != want {
				t.Errorf("%s on the walled machine: %v, want %v", name, n, want)
			}
		}
		if v1.metric("pace_discovery_proofs_sent_total") == 0 {
			t.Error("v1 sent no proof: the walled machine's challenges never reached it")
		}
	})
}

// forgeAProof plays a machine that beacons, takes the challenge v1 sends it, and answers with a
// proof whose signature is not over what it carries: v1 counts it forged and hands nothing on.
func forgeAProof(t *testing.T, h *netlab.Host, v1 *machine) {
	t.Helper()
	pc, err := h.ListenPacket("udp4", h.Addr()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	self := pc.LocalAddr().(*net.UDPAddr)
	s := verbs.FleetSummary{ClusterID: "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0", State: verbs.FleetSolitary, CreatedAt: 1,
		LeaderID: "forger", NodeID: "forger", RaftEndpoint: fmt.Sprintf("%s:6680", h.Addr()),
		NodeEndpoint: fmt.Sprintf("%s:6674", h.Addr()), MemberTotal: 1}
	beaconTo, _ := net.ResolveUDPAddr("udp4", v1.host.Addr()+":6681")
	before := v1.metric("pace_discovery_proofs_refused_forged_total")
	foreign := v1.metric("pace_discovery_foreign_proofs_total")
	pc.SetDeadline(time.Now().Add(20 * time.Second))
	var challenge discoverywire.Challenge
	var from net.Addr
	for challenge == (discoverywire.Challenge{}) {
		if _, err := pc.WriteTo(discoverywire.AppendBeacon(nil, s), beaconTo); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, discoverywire.MaxDatagram)
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no challenge for the forger's beacon at %s: %v", self, err)
		}
		if d, err := discoverywire.Parse(buf[:n]); err == nil && d.Kind == discoverywire.KindChallenge {
			challenge, from = d.Challenge, addr
		}
	}
	key, err := identity.NewKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	proof := discoverywire.SignProof(key, challenge, s)
	proof.Signature[7] ^= 1 // a signature that no longer covers what it carries
	if _, err := pc.WriteTo(discoverywire.AppendProof(nil, proof), from); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the forged proof counted", 10*time.Second, func() (bool, string) {
		n := v1.metric("pace_discovery_proofs_refused_forged_total")
		return n == before+1, fmt.Sprint(n)
	})
	if n := v1.metric("pace_discovery_foreign_proofs_total"); n != foreign {
		t.Fatalf("a forged proof was handed to formation: %v foreign proofs, %v before", n, foreign)
	}
}
