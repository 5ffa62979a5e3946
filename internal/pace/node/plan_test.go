package node

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func testEnv(dir string) Env {
	return Env{
		RoutedFrom:      func() (string, error) { return "10.0.0.7", nil },
		DefaultStateDir: func() (string, string, error) { return dir, "per-user: test", nil },
	}
}

func plan(t *testing.T, args ...string) Plan {
	t.Helper()
	c, err := Load(args, 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	return NewPlan(c, testEnv(t.TempDir()))
}

func TestPrintSurfacesOfADefaultNode(t *testing.T) {
	p := plan(t)
	var out bytes.Buffer
	if status := p.PrintSurfaces(&out); status != 0 {
		t.Fatalf("status %d:\n%s", status, out.String())
	}
	for _, want := range []string{
		"mode: solitary (no cluster minted yet; the first start mints one)",
		"node              0.0.0.0:6674",
		"admin             -                     not served; set --admin-listen",
		"raft              0.0.0.0:6680",
		"node endpoint       10.0.0.7:6674",
		"consensus endpoint  10.0.0.7:6680",
		"cluster    none minted yet",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}

func TestBindRules(t *testing.T) {
	p := plan(t, "--admin-listen=9000", "--listen-node=127.0.0.1:7000", "--listen-raft=7001")
	if p.Bind("admin") != "127.0.0.1:9000" || p.Bind("node") != "127.0.0.1:7000" || p.Bind("raft") != "0.0.0.0:7001" {
		t.Fatalf("%+v", p.Surfaces)
	}
	if typo := plan(t, "--listen-node=:6674"); len(typo.Violations) == 0 || !strings.Contains(typo.Violations[0], ":6674") {
		t.Fatalf("empty host accepted: %v", typo.Violations)
	}
}

// TestStartupRules checks each rule of pace-node §3.4 this build applies, printed after the
// map with exit 2.
func TestStartupRules(t *testing.T) {
	cases := map[string][]string{
		"rule 4: no consensus with a worker":        {"--listen-raft="},
		"rule 5: raft-self without consensus":       {"--listen-raft=", "--slots=0", "--raft-self=10.0.0.1"},
		"rule 2: fleet-open advertising loopback":   {"--fleet-open", "--advertise=127.0.0.1:6674"},
		"rule 2: fleet-open advertising a wildcard": {"--fleet-open", "--advertise=0.0.0.0:6674"},
		"rule 2: advertise while binding loopback":  {"--fleet-open", "--listen-node=127.0.0.1:6674", "--advertise=10.0.0.7:6674"},
		"rule 7: no discovery and no toolchain":     {"--no-toolchain-discovery"},
		"rule 7: worker flags with --slots=0":       {"--slots=0", "--toolchain=gcc"},
		"rule 9: upstream is not host:port":         {"--upstream=pace-kv"},
		"rule 1: consensus endpoint is a wildcard":  {"--raft-self=0.0.0.0"},
	}
	for name, args := range cases {
		p := plan(t, args...)
		var out bytes.Buffer
		if status := p.PrintSurfaces(&out); status != 2 || !strings.Contains(out.String(), "refused: this node would not start") {
			t.Errorf("%s: status %d\n%s", name, status, out.String())
		}
	}
	if p := plan(t, "--listen-raft=", "--slots=0"); len(p.Violations) != 0 {
		t.Errorf("a cache-only node without consensus is allowed: %v", p.Violations)
	}
}

func TestUnroutedMachineAdvertisesLoopbackWithANote(t *testing.T) {
	c, _ := Load(nil, 8<<30)
	env := testEnv(t.TempDir())
	env.RoutedFrom = func() (string, error) { return "", errors.New("no route") }
	p := NewPlan(c, env)
	if p.Advertise != "127.0.0.1:6674" || len(p.Notes) == 0 || len(p.Violations) != 0 {
		t.Fatalf("%+v", p)
	}
}

// TestAutoEndpointsOfALoopbackNode: a node port or consensus port bound to loopback advertises
// that loopback address (the routed one would reach nothing), and only a node port other
// machines reach follows the route while running.
func TestAutoEndpointsOfALoopbackNode(t *testing.T) {
	p := plan(t, "--listen-node=127.0.0.1:7000", "--listen-raft=127.0.0.2:7001")
	if p.Advertise != "127.0.0.1:7000" || p.RaftEndpoint != "127.0.0.2:7001" || p.FollowsRoute {
		t.Fatalf("loopback: advertise %s raft %s follows %v", p.Advertise, p.RaftEndpoint, p.FollowsRoute)
	}
	p = plan(t, "--listen-node=7000")
	if hostOf(p.Advertise) == "127.0.0.1" || !p.FollowsRoute {
		t.Fatalf("wildcard: advertise %s follows %v", p.Advertise, p.FollowsRoute)
	}
	if p = plan(t, "--listen-node=7000", "--advertise=10.0.0.9:7000"); p.FollowsRoute {
		t.Fatal("a pinned --advertise never moves by itself")
	}
}
