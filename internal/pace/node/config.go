package node

import "github.com/buildfleet/buildfleet/internal/pace/worker"

// Config is everything pace-node's flags and --config file set (pace-node §3.1).
type Config struct {
	ConfigFile  string
	ListenNode  string // [addr:]port; "" closes the node port
	ListenRaft  string // [addr:]port; "" runs no consensus
	Advertise   string // "auto" or host:port
	RaftSelf    string // host peers dial for consensus; "" or "auto" derives it
	NodeID      string
	ClusterDir  string
	FleetOpen   bool
	Upstream    string
	RequirePass string
	AdminListen string       // [addr:]port; bare port binds loopback; "" off
	Worker      worker.Flags // --slots, --toolchain, --drain-timeout and the rest of the worker's
	CacheMemory uint64
	CacheDir    string
	CacheDisk   uint64
	LogLevel    string

	// One-shot verbs.
	PrintSurfaces bool
	PrintIdentity bool

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
