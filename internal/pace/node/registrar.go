package node

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
	"github.com/buildfleet/buildfleet/internal/pace/nodeproof/sealedconn"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Heartbeat cadence (pace-node §6.1): every 20 s; the scheduler drops an entry after 90 s
// without.
const heartbeatEvery = 20 * time.Second

// registrar keeps this node's toolchains registered with the leader's scheduler: one
// REGISTER per toolchain once the survey is done, then a HEARTBEAT every 20 s (at once on a
// cordon or toolchain change), and WITHDRAW at stop. It uses the same sealed connection any
// node would, proving this node's identity key; a node that leads its own cluster of one
// reaches itself over loopback and nothing is special-cased.
type registrar struct {
	n         *Node
	conn      *sealedconn.Conn
	workerIDs map[string]string // fingerprint -> worker id the scheduler gave
	endpoint  string            // the endpoint those registrations name
	leader    string            // the leader those registrations are with
	load      *loadSampler
}

// leaderCheckEvery is how often the registrar looks whether leadership moved, so a worker is
// registered with a new leader within about a second, not at its next heartbeat.
const leaderCheckEvery = time.Second

func (r *registrar) run(ctx context.Context) {
	if _, err := r.n.work.WaitSurvey(ctx); err != nil {
		return // logged by the worker; a node serving nothing registers nothing
	}
	t := time.NewTicker(heartbeatEvery)
	defer t.Stop()
	check := time.NewTicker(leaderCheckEvery)
	defer check.Stop()
	for {
		r.beat(ctx)
		select {
		case <-ctx.Done():
			r.withdraw()
			return
		case <-t.C:
		case <-r.n.work.Changes():
		case <-r.n.endpointMoved:
		case <-check.C:
			if !r.leaderMoved() {
				continue
			}
		}
	}
}

// leaderMoved reports a new leader, dropping the connection and the registrations made with
// the old one: they are registered again with the new leader at once.
func (r *registrar) leaderMoved() bool {
	id, _ := r.n.cons.Leader()
	if id == r.leader {
		return false
	}
	r.n.log.Info("the leader moved: registering the worker with the new one", "from", r.leader, "to", id)
	r.leader = id
	r.drop()
	r.workerIDs = map[string]string{}
	return true
}

// drop closes the connection to the scheduler, if any.
func (r *registrar) drop() {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
}

// beat registers whatever is not registered and heartbeats the rest; any failure drops the
// connection so the next beat starts over (a new leader, a restarted scheduler).
func (r *registrar) beat(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.ensureConn(ctx); err != nil {
		r.n.log.Debug("scheduler not reachable for registration", "err", err)
		return
	}
	if r.registerAll(ctx) == nil {
		r.heartbeat(ctx) // a failure dropped the connection; the next beat redials
	}
}

func (r *registrar) ensureConn(ctx context.Context) error {
	if r.conn != nil {
		return nil
	}
	addr := r.n.schedulerAddr()
	if addr == "" {
		return errors.New("no leader is known")
	}
	r.leader, _ = r.n.cons.Leader()
	return r.dial(ctx, addr)
}

// dial opens the proven, sealed connection to the scheduler at addr.
func (r *registrar) dial(ctx context.Context, addr string) error {
	conn, err := sealedconn.Dial(ctx, addr, sealedconn.Config{Prover: &nodeproof.Client{
		ID: r.n.id.NodeID, Key: r.n.id.Key, Roster: liveRoster{r.n.cons}, Random: rand.Reader,
	}, Counters: &r.n.proofCounters})
	if err != nil {
		return err
	}
	r.conn = conn
	r.n.historyOut.NewLeader() // perhaps another leader: hand it every minute kept
	return nil
}

// do sends one scheduler verb, following not-leader to the leader it names (two hops at
// most: this node's view of who leads may lag). Any other failure drops the connection.
func (r *registrar) do(ctx context.Context, op wire.Op, payload []byte) ([]byte, error) {
	fields, err := splitPayload(op, payload)
	for hop := 0; err == nil; hop++ {
		var body []byte
		if _, body, err = r.conn.Do(ctx, op, fields...); err == nil {
			return body, nil
		}
		var ref wire.Refusal
		if !errors.As(err, &ref) || ref.Code != wire.CodeNotLeader || ref.Message == "" || hop == maxLeaderHops {
			break
		}
		r.drop()
		r.workerIDs = map[string]string{} // registrations are the old leader's
		if err = r.dial(ctx, ref.Message); err != nil {
			return nil, err
		}
		if op != wire.OpRegister {
			return nil, errReregister // heartbeats name ids only the old leader gave
		}
	}
	var ref wire.Refusal
	if errors.As(err, &ref) && ref.Code == wire.CodeNoWorker {
		r.workerIDs = map[string]string{} // the scheduler forgot us: register again
	}
	r.drop()
	return nil, err
}

// maxLeaderHops is how many not-leader answers the registrar follows in one verb.
const maxLeaderHops = 2

// errReregister ends a beat that found a new leader mid-heartbeat: the next beat registers.
var errReregister = errors.New("the leader moved: registering again")

func (r *registrar) registerAll(ctx context.Context) error {
	endpoint := r.n.endpoint()
	if err := r.withdrawStale(ctx, endpoint); err != nil {
		return err
	}
	r.endpoint = endpoint
	for _, tc := range r.n.work.Toolchains() {
		if r.workerIDs[tc.Fingerprint] != "" {
			continue
		}
		req := verbs.RegisterRequest{Fingerprint: tc.Fingerprint, Endpoint: endpoint, Slots: uint32(r.n.work.Status().Slots),
			Codecs: wire.NewCodecList(wire.CodecZstd, wire.CodecLZ4), Capacity: r.n.capacity(tc.Label)}
		body, err := r.do(ctx, wire.OpRegister, req.Append(nil))
		if err != nil {
			return err
		}
		ok, err := verbs.ParseRegisterOk(body)
		if err != nil {
			return err
		}
		r.workerIDs[tc.Fingerprint] = ok.WorkerID
	}
	return nil
}

// withdrawStale withdraws the registrations no longer true: a toolchain no longer served stops
// being offered at once (pace-node §5.6), and after an endpoint move every registration goes,
// to be made again under the new endpoint.
func (r *registrar) withdrawStale(ctx context.Context, endpoint string) error {
	served := map[string]bool{}
	for _, tc := range r.n.work.Toolchains() {
		served[tc.Fingerprint] = r.endpoint == "" || r.endpoint == endpoint
	}
	for fp, id := range r.workerIDs {
		if !served[fp] {
			if _, err := r.do(ctx, wire.OpWithdraw, verbs.WithdrawRequest{WorkerID: id}.Append(nil)); err != nil {
				return err
			}
			delete(r.workerIDs, fp)
		}
	}
	return nil
}

func (r *registrar) heartbeat(ctx context.Context) error {
	st := r.n.work.Status()
	load := verbs.Load{Cordoned: st.Cordon != 1, CompileBudgetFull: st.BudgetLimited}
	r.load.sample(&load, st.ScratchRoot)
	load.Cache = r.n.cacheLoad()
	hist := r.n.historyOut.Pending()
	load.History = hist // on the first heartbeat only: one machine, one history
	for _, id := range r.workerIDs {
		req := verbs.HeartbeatRequest{WorkerID: id, InFlight: uint32(st.InFlight), Load: load}
		if _, err := r.do(ctx, wire.OpHeartbeat, req.Append(nil)); err != nil {
			return err
		}
		if len(load.History) > 0 {
			r.n.historyOut.Acknowledged(hist[len(hist)-1].StartMs)
			load.History = nil
		}
	}
	return nil
}

func (r *registrar) withdraw() {
	if r.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, id := range r.workerIDs {
		r.conn.Do(ctx, wire.OpWithdraw, []byte(id))
	}
	r.conn.Close()
}

// splitPayload turns an Append-built payload back into fields for Do.
func splitPayload(op wire.Op, payload []byte) ([][]byte, error) {
	info, _ := wire.Lookup(op)
	return wire.SplitFields(nil, payload, info.Arity)
}

// schedulerAddr is where this node's scheduler verbs go: its own node port over loopback while
// it leads, else the scheduler endpoint the leader announced.
func (n *Node) schedulerAddr() string {
	if n.cons.IsLeader() {
		host, port, _ := net.SplitHostPort(n.nodeLn.Addr().String())
		if isWildcardHost(host) {
			host = "127.0.0.1"
		}
		return net.JoinHostPort(host, port)
	}
	id, ok := n.cons.Leader()
	if !ok {
		return ""
	}
	m, _ := n.cons.State().Member(id)
	return m.SchedulerEndpoint
}
