package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/history"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/lease"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/scheduler"
	"github.com/buildfleet/buildfleet/internal/pace/thismachine"
	"github.com/buildfleet/buildfleet/internal/pace/tier"
	"github.com/buildfleet/buildfleet/internal/pace/worker"
)

// Version is pace-node's version, sent in REGISTER's capacity record.
const Version = "0.1.0"

// Node is a running pace-node.
type Node struct {
	plan     Plan
	log      *slog.Logger
	LogLevel *slog.LevelVar
	host     worker.Host
	id       *identity.Identity
	cons     *consensus.Node
	tier     *tier.Tier // nil: no cache tier
	sched    *scheduler.Scheduler
	work     *worker.Worker // nil: --slots=0
	proof    *nodeproof.Server
	local    *thismachine.Set
	frames   *frameserver.Server
	nodeLn   net.Listener
	raftLn   net.Listener
	links    *links // consensus links (links.go)
	// raftBound is the address the consensus port is bound at (the kernel's port for a :0);
	// "" while none was bound.
	raftBound  string
	boot       atomic.Pointer[bootstrap] // the fleet this node asks to join (formation.go)
	asking     askState                  // where this node stands with it (formation_enroll.go)
	joinMu     sync.Mutex                // one join at a time
	discovered discoveredFleets          // fleets discovery proved on the segment (discovery.go)
	admin      *http.Server
	adminLn    net.Listener
	metrics    *metrics
	counters   counters
	enroll     enrollState // the leader's enrollment window (enroll.go)

	// historyOut holds this node's closed minutes until a leader takes them; fleetHistory is
	// what this node, while it leads, was handed by every machine (history.go).
	historyOut   history.Outbox
	fleetHistory history.Fleet
	historyStore historyStore // its file in the state directory (history_store.go)

	proofCounters nodeproof.Counters
	frameCounters frameserver.Counters // the node port's connections and server-side refusals
	compileBudget uint64               // the worker's in-flight byte budget; 0 without a worker
	spentTickets  *lease.SpentSet
	flagFleetOpen atomic.Bool
	advertise     atomic.Pointer[string]
	followsRoute  atomic.Bool            // auto advertise on a node port other machines reach
	raftEndpoint  atomic.Pointer[string] // the consensus endpoint peers dial ("" with no consensus port)
	// raftFollowsRoute: the consensus endpoint is auto, re-derived with the advertised one (set
	// at start; --raft-self cannot change on reload).
	raftFollowsRoute bool
	endpointMoved    chan struct{} // wakes the registrar when the advertised endpoint moves
	announceNow      chan struct{} // wakes the announcer when either endpoint moves
	former           formerEndpoints
	env              Env // the machine the node plans against, at start and on reload
	stopping         atomic.Bool
	cancel           context.CancelFunc
	wg               sync.WaitGroup
	now              func() time.Time
}

// ErrRefused wraps a configuration the startup rules refuse; main exits 2.
var ErrRefused = errors.New("refused")

func (n *Node) roster() liveRoster { return liveRoster{n.cons} }

// fleetOpen is this node's --fleet-open or the replicated fleet-open setting.
func (n *Node) fleetOpen() bool {
	return n.flagFleetOpen.Load() || n.cons.State().Settings().FleetOpen
}

// endpoint is the advertised endpoint, signed into every lease for this worker.
func (n *Node) endpoint() string { return *n.advertise.Load() }

// consensusEndpoint is where peers dial this node for consensus now: --raft-self, or the
// address this machine routes from as last derived (pace-consensus §7.4); "" with no consensus
// port of its own (a learner).
func (n *Node) consensusEndpoint() string { return *n.raftEndpoint.Load() }

func identityVerifyTicket(n *Node, ticket []byte) (identity.Ticket, *identity.TicketRefusal) {
	return identity.VerifyTicket(ticket, n.roster(), n.endpoint(), n.now(), n.spentTickets)
}

// Addr is the node port's bound address.
func (n *Node) Addr() net.Addr { return n.nodeLn.Addr() }

// AdminAddr is the admin surface's address, or nil.
func (n *Node) AdminAddr() net.Addr {
	if n.adminLn == nil {
		return nil
	}
	return n.adminLn.Addr()
}

// Stop stops accepting, drains running compiles up to --drain-timeout, then closes every
// component. It returns the compiles it abandoned (main exits 75 when there are any).
func (n *Node) Stop(ctx context.Context) (abandoned []string, err error) {
	n.stopping.Store(true)
	n.nodeLn.Close()
	if n.work != nil {
		report := n.work.Stop(ctx, n.plan.Cfg.Worker.Drain())
		abandoned = report.Abandoned
	}
	n.cancel()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = n.frames.Shutdown(sctx)
	if n.admin != nil {
		n.admin.Shutdown(sctx)
	}
	if n.raftLn != nil {
		n.raftLn.Close()
	}
	n.discovered.close()
	n.wg.Wait()
	n.saveHistory()
	n.closeComponents(sctx)
	return abandoned, err
}

func (n *Node) closeComponents(ctx context.Context) {
	if n.work != nil {
		n.work.Close()
	}
	if n.tier != nil {
		n.tier.Close(ctx)
	}
	n.cons.Stop()
}

func (n *Node) goRun(f func()) {
	n.wg.Add(1)
	go func() { defer n.wg.Done(); f() }()
}

func wrapRefused(p Plan) error {
	return fmt.Errorf("%w: %v", ErrRefused, p.Violations)
}
