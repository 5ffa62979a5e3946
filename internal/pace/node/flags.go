package node

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/pace/flagval"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
)

// ErrUsage reports a command line the node refuses; main exits 2 with its message.
var ErrUsage = errors.New("usage")

// newFlagSet binds every flag to c.
func newFlagSet(c *Config, totalRAM uint64) (*flag.FlagSet, func()) {
	fs := flag.NewFlagSet("pace-node", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mem := flagval.Size{Bytes: defaultCacheMemory(totalRAM), Of: totalRAM}
	disk, inflight := flagval.Size{}, flagval.Size{}
	c.Worker.Register(fs)
	fs.StringVar(&c.ConfigFile, "config", "", "YAML settings `file` (flat name: value lines); the command line wins")
	fs.StringVar(&c.ListenNode, "listen-node", "6674", "the node port `[addr:]port` (cache, scheduler and compile verbs)")
	fs.StringVar(&c.ListenRaft, "listen-raft", "6680", "consensus `[addr:]port`; empty runs none (only with --slots=0)")
	fs.StringVar(&c.Advertise, "advertise", "auto", "`host:port` clients dial for compiles; auto = the address this machine routes from")
	fs.StringVar(&c.RaftSelf, "raft-self", "auto", "`host` peers dial for consensus")
	fs.StringVar(&c.NodeID, "node-id", "", "this node's `id` (minted on first start when empty)")
	fs.StringVar(&c.ClusterDir, "cluster-dir", "", "state `directory` (identity, consensus log)")
	fs.BoolVar(&c.FleetOpen, "fleet-open", false, "admit any caller to compile and scheduler verbs (never to the cache tier)")
	fs.Func("fleet-seed", "a fleet member's node port `host[:port]` to ask to join that fleet (repeatable; asked while this node is a cluster of one)", func(v string) error {
		addr, err := seedAddr(v)
		c.FleetSeeds = append(c.FleetSeeds, addr)
		return err
	})
	fs.Func("discovery", "where beacons are sent: `auto` (every eligible interface's broadcast, port 6681), off, or host[:port] targets, comma-separated", c.Discovery.addTargets)
	fs.IntVar(&c.Discovery.ReplyPort, "discovery-reply-port", 0, "UDP `port` discovery's challenges and proofs arrive on (0: chosen by the kernel at every start)")
	fs.Func("fleet-id", "pin the one fleet this node may join, `<cluster-id>@<key>[,<key>…]`, and the keys it takes that fleet's word from", func(v string) (err error) {
		c.FleetID, err = parseFleetPin(v)
		return err
	})
	fs.StringVar(&c.Upstream, "upstream", "", "the pace-kv `host:port` this node's tier reads through to")
	fs.StringVar(&c.RequirePass, "requirepass", "", "the `secret` presented to --upstream")
	fs.StringVar(&c.AdminListen, "admin-listen", "", "HTTP /metrics and /healthz `[addr:]port` (bare port: loopback)")
	fs.BoolVar(&c.Dashboard, "dashboard", false, "also serve the fleet dashboard (/fleet, /fleet.json, /fleet.txt) on --admin-listen; the leader answers it")
	fs.StringVar(&c.DashboardTokenFile, "dashboard-token-file", "", "`file` holding the dashboard's token (Bearer, or Basic with any username); required when --admin-listen is not loopback")
	fs.Var(&mem, "cache-memory", "memory tier budget (size or N% of RAM; 0 turns it off)")
	fs.StringVar(&c.CacheDir, "cache-dir", "", "disk tier `directory`")
	fs.Var(&disk, "cache-disk", "disk tier budget (0: grow as needed)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&c.MaxConns, "max-connections", frameserver.DefaultMaxConns, "open node-port connections; at the cap a newcomer displaces a long-idle connection of the busiest address, or is closed at once")
	fs.IntVar(&c.MaxConnsPerAddr, "max-connections-per-address", defaultConnsPerAddr, "open node-port connections of one source address (IPv4, or IPv6 /64; loopback too)")
	fs.Var(&inflight, "max-inflight", "node-port payload bytes of frames over 64KiB received or handled at once (default the compile budget plus 256MiB, at least 512MiB)")
	fs.BoolVar(&c.PrintSurfaces, "print-surfaces", false, "print every port this configuration binds, judge it, exit")
	fs.BoolVar(&c.PrintIdentity, "print-identity", false, "mint or read this node's identity, print it, exit")
	fs.Func("scheduler", "operator verbs go to this `host:port` (repeatable, tried in order; default this machine's node)", func(v string) error {
		c.Schedulers = append(c.Schedulers, v)
		return nil
	})
	fs.BoolVar(&c.ClusterStatus, "cluster-status", false, "print the fleet's members, seats, endpoints, keys and settings, as the leader sees them")
	fs.StringVar(&c.ClusterAdmit, "cluster-admit", "", "admit `<id>=<host>:<port>[@<key>]` as a voter (a learner first, promoted once caught up), promote a learner, or record a move")
	fs.StringVar(&c.ClusterAdmitLearner, "cluster-admit-learner", "", "admit `<id>=<host>:<port>[@<key>]` as a learner, or demote a voter")
	fs.StringVar(&c.ClusterForget, "cluster-forget", "", "remove member `id` and revoke its key, in one entry")
	fs.StringVar(&c.ClusterSet, "cluster-set", "", "set a replicated setting `name=value` (fleet-open, lease-lifetime)")
	fs.BoolVar(&c.EnrollList, "enroll-list", false, "print the machines asking to join the fleet, and whether an automatic window is open")
	fs.StringVar(&c.EnrollApprove, "enroll-approve", "", "admit the machine asking as `<id>@<key>` as a learner (the key it asked with)")
	fs.StringVar(&c.EnrollReject, "enroll-reject", "", "reject the machine `id` asking to join (it does not ask again for an hour)")
	fs.BoolVar(&c.EnrollClear, "enroll-clear", false, "empty the list of machines asking to join")
	fs.StringVar(&c.EnrollAutoApprove, "enroll-auto-approve", "", "admit every machine asking to join as a learner for `duration` (at most 24h), or off")
	fs.BoolVar(&c.ClusterRecover, "cluster-recover", false, "with this node stopped, make it its cluster's only voter again (a quorum lost for good); other voters stay as learners")
	fs.Func("cluster-recover-forget", "with --cluster-recover, also forget member `id` and revoke its key (repeatable)", func(v string) error {
		c.RecoverForget = append(c.RecoverForget, v)
		return nil
	})
	for _, name := range retired {
		fs.Func(name, "retired", func(string) error { return fmt.Errorf("--%s is retired and not accepted", name) })
	}
	finish := func() {
		c.CacheMemory, c.CacheDisk, c.MaxInflight = mem.Bytes, disk.Bytes, inflight.Bytes
	}
	return fs, finish
}

// defaultConnsPerAddr is the node port's per-address cap: twice frameserver's, since loopback
// carries a whole build's pace-cc connections (tier, leases) on a machine running -j128.
const defaultConnsPerAddr = 2 * frameserver.DefaultMaxConnsPerAddr

// defaultCacheMemory is 25% of RAM clamped to [512 MiB, 8 GiB] (pace-node §3.1).
func defaultCacheMemory(totalRAM uint64) uint64 {
	return min(max(totalRAM/4, 512<<20), 8<<30)
}

// Load parses the --config file (when the command line names one) and then the command line,
// which wins.
func Load(args []string, totalRAM uint64) (Config, error) {
	c, err := parse(args, totalRAM)
	if err != nil || c.ConfigFile == "" {
		return c, err
	}
	fileArgs, err := readSettingsFile(c.ConfigFile)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return parse(append(fileArgs, args...), totalRAM)
}

func parse(args []string, totalRAM uint64) (Config, error) {
	var c Config
	fs, finish := newFlagSet(&c, totalRAM)
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	finish()
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	return c, nil
}

// Usage renders the flag list for --help.
func Usage(w io.Writer) {
	var c Config
	fs, _ := newFlagSet(&c, 0)
	fs.SetOutput(w)
	fmt.Fprintln(w, "usage: pace-node [flags]")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage != "retired" {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  --%s %s\n      %s\n", f.Name, name, usage)
		}
	})
}
