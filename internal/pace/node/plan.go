package node

import (
	"fmt"
	"net"
	"path/filepath"
	"unicode/utf8"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/dashboard"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
)

// Surface is one row of the surface table: what the node binds, or why it binds nothing.
type Surface struct {
	Name  string
	Bind  string // host:port, or "" when not served
	Proto string
	Note  string // printed when not served
}

// Plan is a configuration resolved against this machine: the surface table the node binds
// from and --print-surfaces prints, the endpoints it advertises, and the startup rules it
// breaks. The same value drives both, so the printed map and the sockets cannot disagree.
type Plan struct {
	Cfg           Config
	Mode          string // formation mode, or "" before the first start
	ClusterID     string
	Surfaces      []Surface
	Advertise     string // endpoint signed into leases; resolved from auto
	AdvertiseAuto bool
	FollowsRoute  bool   // auto on a node port other machines reach: re-derived while running
	RaftEndpoint  string // what peers dial for consensus; "" with no consensus
	// RaftFollowsRoute: the consensus endpoint is auto (no --raft-self) on a port other
	// machines reach, so it is re-derived with the advertised endpoint (pace-consensus §7.4).
	RaftFollowsRoute bool
	StateDir         string
	StateDirReason   string
	Notes            []string
	Violations       []string // startup rules this configuration breaks, each a sentence
	// dashboardToken is --dashboard-token-file's token, read when the plan is judged (the zero
	// Token when none is set).
	dashboardToken dashboard.Token
}

// Env is what planning asks of the machine, injectable for tests.
type Env struct {
	RoutedFrom      func() (string, error)
	DefaultStateDir func() (dir, reason string, err error)
}

// MachineEnv asks the running machine.
func MachineEnv() Env {
	return Env{RoutedFrom: routedFrom, DefaultStateDir: identity.DefaultStateDir}
}

// NewPlan resolves c. Binding errors (typos) and broken startup rules are Violations; the plan
// is still complete enough to print.
func NewPlan(c Config, env Env) Plan {
	p := Plan{Cfg: c}
	p.resolveStateDir(env)
	p.resolveSurfaces()
	p.resolveEndpoints(env)
	p.judge()
	return p
}

func (p *Plan) violate(format string, a ...any) {
	p.Violations = append(p.Violations, fmt.Sprintf(format, a...))
}

func (p *Plan) resolveStateDir(env Env) {
	c := p.Cfg
	if c.ClusterDir != "" {
		p.StateDir, p.StateDirReason = filepath.Clean(c.ClusterDir), "from --cluster-dir"
	} else if dir, reason, err := env.DefaultStateDir(); err == nil {
		p.StateDir, p.StateDirReason = dir, reason
	} else {
		p.violate("no state directory: %v; set --cluster-dir", err)
		return
	}
	f, exists, err := consensus.ReadFormation(p.StateDir)
	switch {
	case err != nil:
		p.violate("the formation record is unusable: %v", err)
	case exists:
		p.Mode, p.ClusterID = string(f.Mode), f.ClusterID
	}
}

func (p *Plan) surface(name, flagName, value, defaultHost, note string) string {
	bind, err := parseListen(flagName, value, defaultHost)
	if err != nil {
		p.violate("%v", err)
	}
	s := Surface{Name: name, Bind: bind, Proto: "TCP", Note: note}
	p.Surfaces = append(p.Surfaces, s)
	return bind
}

func (p *Plan) resolveSurfaces() {
	c := p.Cfg
	p.surface("node", "listen-node", c.ListenNode, "0.0.0.0", "not served: --listen-node is empty")
	p.surface("admin", "admin-listen", c.AdminListen, "127.0.0.1", "not served; set --admin-listen")
	raftNote := "not served: --listen-raft is empty (no consensus)"
	if p.Mode == string(consensus.Learner) {
		p.Surfaces = append(p.Surfaces, Surface{Name: "raft", Proto: "TCP", Note: "not served (learner: dials every voter)"})
	} else {
		p.surface("raft", "listen-raft", c.ListenRaft, "0.0.0.0", raftNote)
	}
	p.discoverySurfaces()
}

// Bind returns a surface's bind address ("" when not served).
func (p Plan) Bind(name string) string {
	for _, s := range p.Surfaces {
		if s.Name == name {
			return s.Bind
		}
	}
	return ""
}

func (p *Plan) resolveEndpoints(env Env) {
	c := p.Cfg
	routed, routeErr := env.RoutedFrom()
	if routeErr != nil {
		routed = "127.0.0.1"
		p.Notes = append(p.Notes, "this machine routes nowhere: auto addresses are loopback, so only this machine can reach the node")
	}
	if nodeBind := p.Bind("node"); nodeBind != "" {
		p.Advertise, p.AdvertiseAuto = c.Advertise, c.Advertise == "auto" || c.Advertise == ""
		if p.AdvertiseAuto {
			p.Advertise = net.JoinHostPort(autoHost(nodeBind, routed), portOf(nodeBind))
			p.FollowsRoute = !isLoopbackHost(hostOf(nodeBind))
		} else if err := parseDial("advertise", c.Advertise); err != nil {
			p.violate("%v", err)
		}
	}
	if raftBind := p.Bind("raft"); raftBind != "" {
		host := c.RaftSelf
		if host == "" || host == "auto" {
			host = autoHost(raftBind, routed)
			p.RaftFollowsRoute = !isLoopbackHost(hostOf(raftBind))
		}
		p.RaftEndpoint = net.JoinHostPort(host, portOf(raftBind))
	}
}

// autoHost is the host an "auto" endpoint names: the address this machine routes from, unless
// the socket binds only loopback, where that address would reach nothing and the bound
// loopback address is the one a caller can dial.
func autoHost(bind, routed string) string {
	if h := hostOf(bind); isLoopbackHost(h) && h != "localhost" {
		return h
	}
	return routed
}

// judge applies the startup policy rules of pace-node §3.4 that this build's features reach.
func (p *Plan) judge() {
	c := p.Cfg
	consensusOn := p.Bind("raft") != "" || p.Mode == string(consensus.Learner)
	if c.Upstream != "" {
		if err := parseDial("upstream", c.Upstream); err != nil {
			p.violate("%v", err)
		}
	}
	if !consensusOn && c.Worker.RunsWorker() {
		p.violate("rule 4: --listen-raft is empty but this node runs a worker: a worker that runs no consensus applies no roster and cannot check leases; set --listen-raft or --slots=0")
	}
	if !consensusOn && c.Explicit("raft-self") {
		p.violate("rule 5: --raft-self names a consensus address but --listen-raft is empty; drop one of them")
	}
	p.judgeDialable(consensusOn)
	p.judgeDashboard()
	p.judgeWorkerFlags()
	for name, v := range map[string]string{"advertise": c.Advertise, "node-id": c.NodeID, "upstream": c.Upstream, "raft-self": c.RaftSelf} {
		if !utf8.ValidString(v) {
			p.violate("rule 10: --%s is not valid UTF-8; values other machines see must be", name)
		}
	}
}

// judgeDialable: a node other machines are meant to use must advertise an endpoint they can dial.
func (p *Plan) judgeDialable(consensusOn bool) {
	c := p.Cfg
	if consensusOn && p.RaftEndpoint != "" && isWildcardHost(hostOf(p.RaftEndpoint)) {
		p.violate("rule 1: the consensus endpoint %s is a wildcard nobody can dial; set --raft-self to this machine's address", p.RaftEndpoint)
	}
	if !c.FleetOpen || p.Advertise == "" {
		return
	}
	adv := hostOf(p.Advertise)
	switch {
	case isWildcardHost(adv):
		p.violate("rule 2: --fleet-open serves other machines but --advertise=%s is a wildcard nobody can dial; name this machine's address", p.Advertise)
	case isLoopbackHost(adv):
		p.violate("rule 2: --fleet-open serves other machines but the advertised endpoint %s reaches only this machine; set --advertise to an address they can dial", p.Advertise)
	case isLoopbackHost(hostOf(p.Bind("node"))):
		p.violate("rule 2: --advertise=%s is for other machines but --listen-node binds only loopback (%s)", p.Advertise, p.Bind("node"))
	}
}

// judgeDashboard is rule 6: the dashboard needs the admin surface to be served on; an admin
// surface other machines can reach needs a token; a token file holding nothing fails closed.
func (p *Plan) judgeDashboard() {
	c := p.Cfg
	admin := p.Bind("admin")
	if c.Dashboard && admin == "" {
		p.violate("rule 6: --dashboard is served on --admin-listen, which is not set; set --admin-listen (a bare port binds loopback)")
	}
	if admin != "" && !isLoopbackHost(hostOf(admin)) && c.DashboardTokenFile == "" {
		p.violate("rule 6: --admin-listen=%s reaches beyond this machine, but no --dashboard-token-file is set; set one, or bind loopback (a bare port)", c.AdminListen)
	}
	if c.DashboardTokenFile != "" {
		tok, err := dashboard.LoadToken(c.DashboardTokenFile)
		if err != nil {
			p.violate("rule 6: --dashboard-token-file: %v", err)
		}
		p.dashboardToken = tok
	}
	if c.Dashboard && admin != "" {
		access := "no token: this machine only"
		if c.DashboardTokenFile != "" {
			access = "behind --dashboard-token-file"
		}
		p.Notes = append(p.Notes, fmt.Sprintf("the fleet dashboard is served on the admin surface (/fleet, /fleet.json, /fleet.txt), by the leader only; %s", access))
	}
}

func (p *Plan) judgeWorkerFlags() {
	c := p.Cfg
	if c.Worker.NoDiscovery && len(c.Worker.Toolchains) == 0 && c.Worker.RunsWorker() {
		p.violate("rule 7: --no-toolchain-discovery without --toolchain leaves the worker nothing to serve; name a --toolchain")
	}
	if !c.Worker.RunsWorker() {
		for _, f := range workerOnly {
			if c.Explicit(f) {
				p.violate("rule 7: --%s configures a worker, but --slots=0 runs none", f)
			}
		}
	}
}
