package node

import (
	"fmt"
	"net"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/clusterctl"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// Config is everything pace-node's flags and --config file set (pace-node §3.1).
type Config struct {
	ConfigFile string
	ListenNode string // [addr:]port; "" closes the node port
	ListenRaft string // [addr:]port; "" runs no consensus
	Advertise  string // "auto" or host:port
	RaftSelf   string // host peers dial for consensus; "" or "auto" derives it
	NodeID     string
	ClusterDir string
	FleetOpen  bool
	// FleetSeeds are fleet members to ask for their fleet (host:port of a node port);
	// FleetID pins the one fleet this node may join and the keys whose word it takes.
	FleetSeeds  []string
	Discovery   Discovery // --discovery, --discovery-reply-port (pace-node §9.1)
	FleetID     FleetPin
	Upstream    string
	RequirePass string
	AdminListen string // [addr:]port; bare port binds loopback; "" off
	// Dashboard also serves /fleet* on the admin surface; DashboardTokenFile holds the token
	// every /fleet route then needs (pace-node §10.3).
	Dashboard          bool
	DashboardTokenFile string
	Worker             worker.Flags // --slots, --toolchain, --drain-timeout and the rest of the worker's
	CacheMemory        uint64
	CacheDir           string
	CacheDisk          uint64
	LogLevel           string
	// The node port's limits (pace-wire §1.8): open connections, those of one source address,
	// and the in-flight payload budget (0: the compile budget plus the session cap, at least
	// frameserver.DefaultPayloadBudget).
	MaxConns        int
	MaxConnsPerAddr int
	MaxInflight     uint64

	// One-shot verbs.
	PrintSurfaces bool
	PrintIdentity bool
	// Operator verbs (pace-node §3.2), sent to Schedulers; at most one per invocation.
	Schedulers          []string
	ClusterStatus       bool
	ClusterAdmit        string
	ClusterAdmitLearner string
	ClusterForget       string
	ClusterSet          string
	// Enrollment verbs (pace-node §9.3), to the leader like the cluster verbs.
	EnrollList        bool
	EnrollApprove     string
	EnrollReject      string
	EnrollClear       bool
	EnrollAutoApprove string
	// Offline recovery (pace-consensus §7.7): with the node stopped, re-found the cluster with
	// this node as its only voter, forgetting RecoverForget.
	ClusterRecover bool
	RecoverForget  []string

	// set records which flags were given explicitly (command line or file), by flag name.
	set map[string]bool
}

// Explicit reports whether a flag was given rather than defaulted.
func (c Config) Explicit(name string) bool { return c.set[name] }

// reloadable are the settings a SIGHUP may change (pace-node §3.3).
var reloadable = map[string]bool{
	"log-level": true, "allow-compile-arg": true, "requirepass": true, "fleet-open": true,
	"toolchain": true, "no-toolchain-discovery": true, "advertise": true,
}

// workerOnly are the flags a node without a worker (--slots=0) refuses (pace-node §1.2).
var workerOnly = []string{"toolchain", "allow-compile-arg", "drain-timeout", "no-toolchain-discovery", "compile-inflight-max"}

// retired are upstream flags this build refuses by name, so nobody reintroduces them
// (pace-node §3.2).
var retired = []string{"raft-peer", "raft-join", "cluster-id", "serve-scheduler", "listen-scheduler",
	"listen-cache", "fleet-member", "scheduler-token-file", "cluster-admit-client",
	"cluster-forget-client", "cluster-key-file", "voter-key", "enroll-from", "cluster-admit-worker"}

// operatorVerbs are the operator verbs the command line names, each ready to build.
func (c Config) operatorVerbs() []func() (clusterctl.Verb, error) {
	named := []struct {
		given bool
		build func() (clusterctl.Verb, error)
	}{
		{c.ClusterStatus, func() (clusterctl.Verb, error) { return clusterctl.Status(), nil }},
		{c.set["cluster-admit"], func() (clusterctl.Verb, error) { return clusterctl.Admit(c.ClusterAdmit, false) }},
		{c.set["cluster-admit-learner"], func() (clusterctl.Verb, error) { return clusterctl.Admit(c.ClusterAdmitLearner, true) }},
		{c.set["cluster-forget"], func() (clusterctl.Verb, error) { return clusterctl.Forget(c.ClusterForget) }},
		{c.set["cluster-set"], func() (clusterctl.Verb, error) { return clusterctl.Set(c.ClusterSet) }},
		{c.EnrollList, func() (clusterctl.Verb, error) { return clusterctl.EnrollList(), nil }},
		{c.set["enroll-approve"], func() (clusterctl.Verb, error) { return clusterctl.EnrollApprove(c.EnrollApprove) }},
		{c.set["enroll-reject"], func() (clusterctl.Verb, error) { return clusterctl.EnrollReject(c.EnrollReject) }},
		{c.EnrollClear, func() (clusterctl.Verb, error) { return clusterctl.EnrollClear(), nil }},
		{c.set["enroll-auto-approve"], func() (clusterctl.Verb, error) { return clusterctl.EnrollAutoApprove(c.EnrollAutoApprove) }},
	}
	var verbs []func() (clusterctl.Verb, error)
	for _, v := range named {
		if v.given {
			verbs = append(verbs, v.build)
		}
	}
	return verbs
}

// OperatorVerb is the operator verb the command line names, if any; more than one is refused.
func (c Config) OperatorVerb() (clusterctl.Verb, bool, error) {
	verbs := c.operatorVerbs()
	switch len(verbs) {
	case 0:
		if len(c.Schedulers) > 0 {
			return clusterctl.Verb{}, false, fmt.Errorf("%w: --scheduler names where an operator verb goes (--cluster-status, --cluster-admit, …); a serving node finds its scheduler from its formation record", ErrUsage)
		}
		return clusterctl.Verb{}, false, nil
	case 1:
		v, err := verbs[0]()
		if err != nil {
			return v, true, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		return v, true, nil
	}
	return clusterctl.Verb{}, true, fmt.Errorf("%w: one operator verb at a time", ErrUsage)
}

// FleetPin is --fleet-id=<cluster-id>@<key>[,<key>…]: the one fleet this node may join, and
// the voter keys it accepts that fleet's word from. The zero value pins nothing (trust on
// first use).
type FleetPin struct {
	ClusterID string
	Keys      [][]byte
}

// parseFleetPin reads --fleet-id; an id without a key is refused.
func parseFleetPin(v string) (FleetPin, error) {
	id, keys, ok := strings.Cut(v, "@")
	if !ok || id == "" || keys == "" {
		return FleetPin{}, fmt.Errorf("--fleet-id=%q: want <cluster-id>@<key>[,<key>…] (an id alone pins no key to check the fleet by)", v)
	}
	p := FleetPin{ClusterID: id}
	for _, k := range strings.Split(keys, ",") {
		key, err := edkey.Parse(k)
		if err != nil {
			return FleetPin{}, fmt.Errorf("--fleet-id: key %q: %w", k, err)
		}
		p.Keys = append(p.Keys, key)
	}
	return p, nil
}

// seedAddr is a --fleet-seed: host[:port], the port 6674 when left out.
func seedAddr(v string) (string, error) {
	if _, _, err := net.SplitHostPort(v); err == nil {
		return v, nil
	}
	if v == "" || strings.ContainsAny(v, " /") {
		return "", fmt.Errorf("--fleet-seed=%q: want host[:port]", v)
	}
	return net.JoinHostPort(v, "6674"), nil
}
