package discovery

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/clocktest"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func TestLimiterBurstRefillAndBound(t *testing.T) {
	l := newLimiter[string](Rate{Every: time.Second, Burst: 2}, 2)
	now := t0
	if got := []bool{l.allow("a", now), l.allow("a", now), l.allow("a", now)}; !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("a burst of 2 is two and no more: %v", got)
	}
	if !l.allow("a", now.Add(time.Second)) || l.allow("a", now.Add(time.Second)) {
		t.Error("one token a second")
	}
	if !l.allow("b", now) {
		t.Fatal("b")
	}
	if l.allow("c", now) {
		t.Error("a third key in a table of two whose buckets are still refilling")
	}
	later := now.Add(5 * time.Second) // both buckets full again: the same as none
	if !l.allow("c", later) || len(l.m) > 2 {
		t.Errorf("pruning refilled buckets makes room: %d buckets", len(l.m))
	}
}

func TestGuardAnswersPerSourcePerHostAndInAll(t *testing.T) {
	g := newGuard(Limits{
		RepliesPerSource: Rate{Every: time.Hour, Burst: 2}, RepliesPerHost: Rate{Every: time.Hour, Burst: 3},
		RepliesGlobal: Rate{Every: time.Hour, Burst: 5}, ChecksPerHost: Rate{Every: time.Hour, Burst: 1},
		ChecksGlobal: Rate{Every: time.Hour, Burst: 2},
	})
	a1, a2 := netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.1:2")
	b, c := netip.MustParseAddrPort("10.0.0.2:1"), netip.MustParseAddrPort("10.0.0.3:1")
	got := []bool{g.reply(a1, t0), g.reply(a1, t0), g.reply(a1, t0), g.reply(a2, t0), g.reply(a2, t0),
		g.reply(b, t0), g.reply(b, t0), g.reply(c, t0)}
	want := []bool{true, true, false, true, false, true, true, false}
	if !slices.Equal(got, want) {
		t.Errorf("replies %v, want %v (source 2, host 3, all 5)", got, want)
	}
	if !g.check(a1, t0) || g.check(a2, t0) || !g.check(b, t0) || g.check(c, t0) {
		t.Error("checks: one per host, two in all")
	}
}

func TestCookieBindsItsClaimAndLivesTwoEpochs(t *testing.T) {
	j := jar{every: time.Minute, rand: bytes.NewReader(bytes.Repeat([]byte{1, 2, 3}, 100))}
	c := claim{from: netip.MustParseAddrPort("10.0.0.2:40000"), nodeID: "n2", nodeEndpoint: "10.0.0.2:6674",
		raftEndpoint: "10.0.0.2:6680", cluster: "blue"}
	cookie, err := j.mint(t0, c)
	if err != nil {
		t.Fatal(err)
	}
	if !j.check(t0, c, cookie) || !j.check(t0.Add(time.Minute), c, cookie) {
		t.Error("a cookie is good in its epoch and the next")
	}
	if again, _ := j.mint(t0, c); again == cookie || !j.check(t0, c, again) {
		t.Error("every challenge of one claim gets a distinct cookie, each good")
	}
	forged := cookie
	forged[0] ^= 1 // another serial under the same MAC
	if j.check(t0, c, forged) {
		t.Error("the serial is not covered by the MAC")
	}
	for name, other := range map[string]func(claim) claim{
		"another port":     func(c claim) claim { c.from = netip.MustParseAddrPort("10.0.0.2:40001"); return c },
		"another host":     func(c claim) claim { c.from = netip.MustParseAddrPort("10.0.0.3:40000"); return c },
		"another id":       func(c claim) claim { c.nodeID = "n3"; return c },
		"another endpoint": func(c claim) claim { c.nodeEndpoint = "10.0.0.9:6674"; return c },
		"another raft":     func(c claim) claim { c.raftEndpoint = ""; return c },
		"another cluster":  func(c claim) claim { c.cluster = "red"; return c },
	} {
		if j.check(t0, other(c), cookie) {
			t.Errorf("%s: accepted", name)
		}
	}
	// Two epochs on the secret it was made under is gone, whether or not anything minted.
	if j.check(t0.Add(2*time.Minute+time.Second), c, cookie) {
		t.Error("accepted two epochs later")
	}
	if _, err := j.mint(t0.Add(3*time.Minute), c); err != nil || j.check(t0.Add(3*time.Minute), c, cookie) {
		t.Errorf("after rotations: %v", err)
	}
}

func TestNoCookieWithoutRandomness(t *testing.T) {
	broken := jar{every: time.Minute, rand: iotest.ErrReader(errors.New("no entropy"))}
	if _, err := broken.mint(t0, claim{nodeID: "n1"}); err == nil {
		t.Error("a failed random source minted a cookie")
	}
}

func TestCookieTableIsBounded(t *testing.T) {
	var tab cookieTable
	for i := range maxCookies {
		c := Cookie{byte(i), byte(i >> 8)}
		if !tab.room(c, t0) {
			t.Fatalf("no room at %d", i)
		}
		tab.add(c, t0, time.Minute)
	}
	fresh := Cookie{0xff, 0xff, 1}
	if tab.room(fresh, t0) {
		t.Error("room in a full table")
	}
	if !tab.room(Cookie{}, t0) || tab.count(Cookie{}, t0) != 1 {
		t.Error("a cookie already counted always has room")
	}
	if tab.count(Cookie{}, t0.Add(time.Minute)) != 0 || !tab.room(fresh, t0.Add(time.Minute)) {
		t.Error("expired entries make room")
	}
}

func TestRecentLogOncePerMinutePerKey(t *testing.T) {
	var r recentLog
	if !r.due("a", t0) || r.due("a", t0.Add(59*time.Second)) || !r.due("a", t0.Add(time.Minute)) {
		t.Error("once a minute per key")
	}
	for i := range maxLogKeys {
		r.due(strings.Repeat("k", i+2), t0)
	}
	if r.due("new", t0.Add(time.Second)) {
		t.Error("a full table logs nothing new")
	}
	if !r.due("new", t0.Add(2*time.Minute)) {
		t.Error("old keys are pruned")
	}
}

func TestBroadcastTargets(t *testing.T) {
	p := netip.MustParsePrefix
	up := net.FlagUp | net.FlagBroadcast
	ifaces := []Interface{
		{Name: "lo", Flags: net.FlagUp | net.FlagLoopback, Prefixes: []netip.Prefix{p("127.0.0.1/8")}},
		{Name: "eth0", Flags: up, Prefixes: []netip.Prefix{p("10.1.2.3/24"), p("fe80::1/64"), p("169.254.3.4/16")}},
		{Name: "eth1", Flags: up, Prefixes: []netip.Prefix{p("192.168.7.9/20"), p("10.1.2.4/24")}},
		{Name: "eth2", Flags: net.FlagBroadcast, Prefixes: []netip.Prefix{p("10.9.0.1/24")}},
		{Name: "wg0", Flags: net.FlagUp | net.FlagPointToPoint, Prefixes: []netip.Prefix{p("10.8.0.1/24")}},
		{Name: "tun0", Flags: net.FlagUp, Prefixes: []netip.Prefix{p("10.7.0.1/24")}},
		{Name: "eth3", Flags: up, Prefixes: []netip.Prefix{p("10.6.0.1/31"), p("10.6.1.1/32")}},
		{Name: "eth4", Flags: up, Prefixes: []netip.Prefix{p("fd00::1/64")}},
	}
	targets, skipped := broadcastTargets(ifaces, 6681)
	want := []netip.AddrPort{netip.MustParseAddrPort("10.1.2.255:6681"), netip.MustParseAddrPort("192.168.15.255:6681")}
	if !slices.Equal(targets, want) {
		t.Errorf("targets %v, want %v", targets, want)
	}
	for _, reason := range []string{"lo: loopback", "eth0 169.254.3.4/16: link-local", "eth2: down", "wg0: point-to-point",
		"tun0: cannot broadcast", "eth3 10.6.0.1/31: no broadcast", "eth3 10.6.1.1/32: no broadcast", "eth4: no IPv4 subnet"} {
		if !slices.ContainsFunc(skipped, func(s string) bool { return strings.HasPrefix(s, reason) }) {
			t.Errorf("no reason %q in %q", reason, skipped)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]target{
		"10.0.0.255:6681": {host: "10.0.0.255", port: 6681}, "10.0.0.255": {host: "10.0.0.255"},
		"fleet.example:7000": {host: "fleet.example", port: 7000}, "fleet.example": {host: "fleet.example"},
	} {
		if got, err := parseTarget(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", ":6681", "[::1]:6681", "::1", "10.0.0.1:0", "10.0.0.1:70000", "10.0.0.1:x"} {
		if _, err := parseTarget(in); !errors.Is(err, errTarget) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func summaryOf(id, cluster, endpoint string) verbs.FleetSummary {
	return verbs.FleetSummary{ClusterID: cluster, State: verbs.FleetEstablished, NodeID: id, NodeEndpoint: endpoint,
		RaftEndpoint: strings.Replace(endpoint, ":6674", ":6680", 1), MemberTotal: 1}
}

func TestTableEndpointMoveLosesAuthentication(t *testing.T) {
	tab := table{m: map[string]*record{}}
	from := netip.MustParseAddrPort("10.0.0.2:40000")
	s := summaryOf("n2", "blue", "10.0.0.2:6674")
	raw := s.AppendField(nil)[4:]
	tab.heard(s, from, t0, time.Minute)
	if !tab.needsProof("n2", raw, from, t0, time.Hour, true) {
		t.Fatal("a node heard and never proven is challenged")
	}
	tab.proven(s, raw, bytes.Repeat([]byte{1}, 32), from, t0, true)
	if tab.needsProof("n2", raw, from, t0.Add(time.Minute), time.Hour, true) || !tab.isAuthenticated("n2") {
		t.Fatal("the same beacon from the same address is not challenged again before reprove")
	}
	if !tab.needsProof("n2", raw, from, t0.Add(time.Hour), time.Hour, true) {
		t.Error("after reprove it is")
	}
	moved := summaryOf("n2", "blue", "10.0.0.9:6674")
	if lost, _ := tab.heard(moved, from, t0, time.Minute); !lost || tab.isAuthenticated("n2") {
		t.Error("a peer whose beacon claims another endpoint stays authenticated")
	}
	if !tab.needsProof("n2", raw, from, t0, time.Hour, true) {
		t.Error("…and is challenged again even when the old beacon comes back")
	}
}

func TestTableBoundKeepsAuthenticatedPeers(t *testing.T) {
	tab := table{m: map[string]*record{}}
	clock := clocktest.New(t0)
	from := netip.MustParseAddrPort("10.0.0.2:40000")
	for i := range MaxNodes {
		s := summaryOf("n"+strconv.Itoa(i), "blue", "10.0.0.2:6674")
		if !tab.proven(s, nil, nil, from, clock.Now(), true) {
			t.Fatalf("no room at %d", i)
		}
	}
	newcomer := summaryOf("new", "blue", "10.0.0.3:6674")
	if _, ok := tab.heard(newcomer, from, clock.Now(), time.Minute); ok {
		t.Error("a beacon recorded in a table full of authenticated peers")
	}
	if tab.proven(newcomer, nil, nil, from, clock.Now(), false) {
		t.Error("a foreign proof evicted an authenticated peer")
	}
	if len(tab.m) != MaxNodes || tab.authenticated() != MaxNodes {
		t.Errorf("%d records, %d authenticated", len(tab.m), tab.authenticated())
	}
}

func TestTableBoundMakesRoomFromStaleStrangers(t *testing.T) {
	tab := table{m: map[string]*record{}}
	from := netip.MustParseAddrPort("10.0.0.2:40000")
	for i := range MaxNodes {
		if _, ok := tab.heard(summaryOf("n"+strconv.Itoa(i), "red", "10.0.0.2:6674"), from, t0, time.Minute); !ok {
			t.Fatalf("no room at %d", i)
		}
	}
	if _, ok := tab.heard(summaryOf("late", "red", "x:6674"), from, t0.Add(time.Second), time.Minute); ok {
		t.Error("recorded while every stranger is fresh")
	}
	if !tab.proven(summaryOf("proven", "red", "x:6674"), nil, nil, from, t0.Add(time.Second), false) {
		t.Error("a verified proof does not displace an unproven stranger")
	}
	if _, ok := tab.heard(summaryOf("later", "red", "x:6674"), from, t0.Add(2*time.Minute), time.Minute); !ok {
		t.Error("strangers unheard for the stale period are not pruned")
	}
}
