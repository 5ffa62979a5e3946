package fleet

import (
	"strings"
	"testing"
)

func TestCheckMemberID(t *testing.T) {
	good := []string{"n1", "build-box.example", "ünïcode", strings.Repeat("a", MaxIDLen), "0123456789abcdef0123456789abcdef"}
	for _, id := range good {
		if err := CheckMemberID(id); err != nil {
			t.Errorf("CheckMemberID(%q) = %v", id, err)
		}
	}
	bad := []string{"", strings.Repeat("a", MaxIDLen+1), "a b", "a\tb", "a\x00", "n1=x", "\xff"}
	for _, id := range bad {
		if err := CheckMemberID(id); err == nil {
			t.Errorf("CheckMemberID(%q) accepted", id)
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	good := []string{"10.0.0.1:6680", "[::1]:6680", "host.example:1", "h:65535"}
	for _, ep := range good {
		if err := CheckEndpoint(ep); err != nil {
			t.Errorf("CheckEndpoint(%q) = %v", ep, err)
		}
	}
	bad := []string{"", "10.0.0.1", ":6680", "h:0", "h:65536", "h:06680", "h:x", "h :1", "h:1\n", strings.Repeat("h", MaxEndpointLen) + ":1"}
	for _, ep := range bad {
		if err := CheckEndpoint(ep); err == nil {
			t.Errorf("CheckEndpoint(%q) accepted", ep)
		}
	}
}

func TestCheckClusterID(t *testing.T) {
	if err := CheckClusterID(testCluster); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", testCluster[1:], testCluster + "0", strings.ToUpper(testCluster), "g" + testCluster[1:]} {
		if CheckClusterID(id) == nil {
			t.Errorf("CheckClusterID(%q) accepted", id)
		}
	}
}

// TestRaftIDMapping pins the documented mapping, so a change to it (which
// would orphan every recorded cluster) fails here first.
func TestRaftIDMapping(t *testing.T) {
	if got, want := RaftID("n1"), RaftID("n1"); got != want {
		t.Fatal("RaftID is not a function of the id")
	}
	const pinned = 0x15fd0f59b9cd584c // SHA-256("pace-raft-id-v1\x00n1")[:8]
	if got := RaftID("n1"); got != pinned {
		t.Fatalf("RaftID(n1) = %#x, want %#x", got, uint64(pinned))
	}
	seen := map[uint64]string{}
	for i := range 10000 {
		id := "node-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('0'+i/26%10)) + string(rune('A'+i/260%26))
		r := RaftID(id)
		if other, dup := seen[r]; dup && other != id {
			t.Fatalf("RaftID collision between %q and %q", id, other)
		}
		seen[r] = id
	}
}
