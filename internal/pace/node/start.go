package node

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"github.com/buildfleet/buildfleet/internal/pace/tier"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// schedulerIdle is how long the node port keeps a connection that sends nothing
// (pace-node §6.4: the scheduler's 5 s sweep, which is why RELEASE takes a connection of its
// own).
const schedulerIdle = 5 * time.Second

// Start brings a node up from its configuration: identity, sockets (bound from the plan's
// surface table), consensus, the cache tier, the scheduler, the worker, then serving. A
// configuration the startup rules refuse returns ErrRefused before anything is bound.
func Start(ctx context.Context, cfg Config, env Env, log *slog.Logger, level *slog.LevelVar) (*Node, error) {
	p := NewPlan(cfg, env)
	if len(p.Violations) > 0 {
		return nil, wrapRefused(p)
	}
	n := &Node{plan: p, log: log, LogLevel: level, now: time.Now, spentTickets: lease.NewSpentSet(0),
		env: env, endpointMoved: make(chan struct{}, 1), announceNow: make(chan struct{}, 1), raftFollowsRoute: p.RaftFollowsRoute}
	n.flagFleetOpen.Store(cfg.FleetOpen)
	n.followsRoute.Store(p.FollowsRoute)
	adv, raftEP := p.Advertise, p.RaftEndpoint
	n.advertise.Store(&adv)
	n.raftEndpoint.Store(&raftEP)
	n.local = thismachine.New(thismachine.InterfaceAddrs, time.Now, 30*time.Second, log)
	ctx, n.cancel = context.WithCancel(ctx)
	if err := n.open(ctx); err != nil {
		n.cancel()
		n.abort()
		return nil, err
	}
	n.serve(ctx)
	return n, nil
}

// open builds every component; on failure what was built is closed by abort.
func (n *Node) open(ctx context.Context) (err error) {
	cfg := n.plan.Cfg
	if n.id, err = identity.Load(n.plan.StateDir, identity.Options{NodeID: cfg.NodeID}); err != nil {
		return err
	}
	for _, l := range n.id.LogLines() {
		n.log.Info(l)
	}
	if err = n.bind(); err != nil {
		return err
	}
	n.loadBootstrap()
	if err = n.openLinks(); err != nil {
		return err
	}
	n.cons, err = consensus.Open(ctx, consensus.Config{StateDir: n.plan.StateDir, NodeID: n.id.NodeID,
		PublicKey: n.id.Key.Public(), RaftEndpoint: n.consensusEndpoint(), NodeEndpoint: n.endpoint(),
		Endpoints: func() (string, string) { return n.consensusEndpoint(), n.endpoint() },
		Transport: n.links.transport, Logger: n.log})
	if err != nil {
		return err
	}
	n.links.cons.Store(n.cons)
	if err = n.openTier(); err != nil {
		return err
	}
	n.loadHistory()
	n.sched, err = scheduler.New(scheduler.Config{ClusterID: n.cons.State().ClusterID(),
		Signer: leaseSigner{key: n.id.Key, nodeID: n.id.NodeID}, Verifier: clusterVerifier{n.cons}, Logger: n.log,
		History: n.fleetHistory.Add, Decided: n.decided})
	if err != nil {
		return err
	}
	n.proof = &nodeproof.Server{ID: n.id.NodeID, Key: n.id.Key, Roster: liveRoster{n.cons}, Random: rand.Reader, Counters: &n.proofCounters}
	if err = n.startDiscovery(ctx); err != nil {
		return err
	}
	return n.openWorker(ctx)
}

// bind opens the sockets the plan's surface table names. A node port already held (by a
// pace-kv on 6674, say) refuses the start (pace-node §13.8).
func (n *Node) bind() (err error) {
	if n.nodeLn, err = net.Listen("tcp", n.plan.Bind("node")); err != nil {
		return fmt.Errorf("%w: the node port %s is not free (%v): run one of pace-kv and pace-node on it, or give one --listen-node / --listen a port of its own", ErrRefused, n.plan.Bind("node"), err)
	}
	if b := n.plan.Bind("raft"); b != "" {
		if n.raftLn, err = net.Listen("tcp", b); err != nil {
			return fmt.Errorf("consensus port %s: %w", b, err)
		}
	}
	if b := n.plan.Bind("admin"); b != "" {
		if n.adminLn, err = net.Listen("tcp", b); err != nil {
			return fmt.Errorf("admin surface %s: %w", b, err)
		}
	}
	n.fillEphemeralPorts()
	return nil
}

// fillEphemeralPorts puts the ports the kernel chose for a ":0" bind into the endpoints the
// node signs into leases and registers in the roster, so a node started on port 0 (tests, the
// demo) advertises something dialable.
func (n *Node) fillEphemeralPorts() {
	adv := n.boundEndpoint(n.endpoint())
	n.advertise.Store(&adv)
	n.plan.Advertise = adv
	if n.raftLn != nil {
		n.raftBound = n.raftLn.Addr().String()
		if raftEP := n.consensusEndpoint(); portOf(raftEP) == "0" {
			raftEP = net.JoinHostPort(hostOf(raftEP), portOf(n.raftBound))
			n.raftEndpoint.Store(&raftEP)
		}
	}
}

func (n *Node) openTier() (err error) {
	cfg := n.plan.Cfg
	tc := tier.Config{Dir: cfg.CacheDir, MaxDisk: int64(cfg.CacheDisk), MaxMemory: int64(cfg.CacheMemory),
		Upstream: cfg.Upstream, UpstreamPassword: cfg.RequirePass, ThisMachine: n.local, Logger: n.log}
	if !tc.Enabled() {
		n.log.Info("no cache tier (--cache-memory=0 and no --cache-dir): cache verbs answer unknown-opcode")
		return nil
	}
	if n.tier, err = tier.New(tc); err != nil {
		return err
	}
	n.log.Info(n.tier.String())
	return nil
}

func (n *Node) openWorker(ctx context.Context) (err error) {
	cfg := n.plan.Cfg
	tierResident := uint64(0)
	if n.tier != nil {
		tierResident = cfg.CacheMemory
	}
	n.host = hostFacts(tierResident)
	if !cfg.Worker.RunsWorker() {
		return nil
	}
	base := worker.Config{Signer: n.id.Key, VerifyLeases: true, Leases: leaseState{n.cons}, Endpoint: n.endpoint,
		MovedFrom: n.former.movedFrom, Logger: n.log}
	wcfg, err := cfg.Worker.Config(n.host, n.toolchainDir(), base)
	if err != nil {
		return err
	}
	if n.work, err = worker.New(wcfg); err != nil {
		return err
	}
	n.compileBudget = wcfg.Budget
	n.work.Start(ctx)
	return nil
}

// payloadBudget is the node port's in-flight payload budget: --max-inflight, or room for the
// worker's whole compile budget plus one value of the session cap, and never less than
// frameserver's default (pace-node §3.1).
func (n *Node) payloadBudget() int64 {
	if b := n.plan.Cfg.MaxInflight; b > 0 {
		return int64(b)
	}
	return max(frameserver.DefaultPayloadBudget, int64(n.compileBudget)+int64(wire.DefaultSessionCap))
}

// abort closes what open built, after a failed start.
func (n *Node) abort() {
	for _, l := range []net.Listener{n.nodeLn, n.raftLn, n.adminLn} {
		if l != nil {
			l.Close()
		}
	}
	if n.work != nil {
		n.work.Close()
	}
	if n.tier != nil {
		n.tier.Close(context.Background())
	}
	if n.links != nil {
		n.links.transport.Close()
	}
	n.discovered.close()
	if n.cons != nil {
		n.cons.Stop()
	}
}

// serve starts the node port, the consensus listener, the admin surface and the background
// loops, then logs the ready line.
func (n *Node) serve(ctx context.Context) {
	cfg := n.plan.Cfg
	frames, err := frameserver.New(frameserver.Config{Handler: n, IdleTimeout: schedulerIdle, Logger: n.log,
		MaxConns: cfg.MaxConns, MaxConnsPerAddr: cfg.MaxConnsPerAddr, PayloadBudget: n.payloadBudget(),
		Observer: sealedconn.CountSealRefusals(&n.frameCounters, &n.proofCounters)})
	if err != nil {
		panic(err) // the configuration above is static; New only refuses a nil handler
	}
	n.frames = frames
	n.metrics = n.newMetrics()
	n.goRun(func() { n.frames.Serve(n.nodeLn) })
	n.goRun(func() { n.links.transport.Maintain(ctx) })
	n.goRun(func() { n.seekFleet(ctx) })
	if n.adminLn != nil {
		n.serveAdmin()
	}
	n.goRun(func() { every(ctx, schedulerIdle, n.sweep) })
	n.goRun(func() { every(ctx, routeCheckEvery, n.followRoute) })
	n.goRun(func() { n.sampleHistory(ctx) })
	n.goRun(func() { n.keepHistory(ctx) })
	if n.work != nil {
		r := &registrar{n: n, link: schedLink{n: n}, workerIDs: map[string]string{}, load: newLoadSampler()}
		n.goRun(func() { r.run(ctx) })
	}
	a := newAnnouncer(n)
	n.goRun(func() { a.run(ctx) })
	n.log.Info(n.readyLine())
}

// sweep expires leases and silent workers while this node leads (every 5 s).
func (n *Node) sweep() {
	if n.cons.IsLeader() {
		n.dropForgottenWorkers()
		n.sched.Sweep()
	}
}

// every runs f each period until ctx ends.
func every(ctx context.Context, period time.Duration, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// toolchainDir is where the worker keeps its toolchain survey, under the state directory.
func (n *Node) toolchainDir() string { return filepath.Join(n.plan.StateDir, "toolchains") }

func (n *Node) readyLine() string {
	mode := n.cons.Status().Mode
	slots, toolchains, check := "0 (no worker)", "-", "off"
	if n.work != nil {
		st := n.work.Status()
		slots, toolchains, check = fmt.Sprint(st.Slots), "surveying", "on"
		if st.Surveyed {
			toolchains = fmt.Sprint(len(st.Toolchains))
		}
	}
	return fmt.Sprintf("pace-node ready: mode=%s node=%s cluster=%s node-port=%s advertise=%s consensus=%s (dialled at %s) admin=%s slots=%s toolchains=%s lease-check=%s admits: %s; fleet-open %s",
		mode, n.id.NodeID, n.cons.State().ClusterID(), n.nodeLn.Addr(), n.endpoint(), bindOrNone(n.raftLn), orNone(n.consensusEndpoint()),
		bindOrNone(n.adminLn), slots, toolchains, check, admissionPolicy(n), onOff(n.fleetOpen()))
}

func bindOrNone(l net.Listener) string {
	if l == nil {
		return "none"
	}
	return l.Addr().String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// RecoverCluster is --cluster-recover: with the node stopped, it re-founds its cluster with
// this node as the only voter (consensus.Recover), forgetting cfg.RecoverForget.
func RecoverCluster(ctx context.Context, cfg Config, env Env) (consensus.RecoverReport, error) {
	p := NewPlan(cfg, env)
	id, err := identity.Load(p.StateDir, identity.Options{NodeID: cfg.NodeID})
	if err != nil {
		return consensus.RecoverReport{}, err
	}
	return consensus.Recover(ctx, consensus.Config{StateDir: p.StateDir, NodeID: id.NodeID, PublicKey: id.Key.Public(),
		RaftEndpoint: p.RaftEndpoint, LockTimeout: time.Second}, cfg.RecoverForget)
}
