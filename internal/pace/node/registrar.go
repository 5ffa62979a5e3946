package node

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Heartbeat cadence (pace-node §6.1): every 20 s; the scheduler drops an entry after 90 s
// without.
const heartbeatEvery = 20 * time.Second

// registrar keeps this node's toolchains registered with the leader's scheduler: one
// REGISTER per toolchain once the survey is done, then a HEARTBEAT every 20 s (at once on a
// cordon or toolchain change), and WITHDRAW at stop. It uses the same sealed connection any
// node would (schedLink), proving this node's identity key; a node that leads its own cluster
// of one reaches itself over loopback and nothing is special-cased.
type registrar struct {
	n         *Node
	link      schedLink
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
	for due := true; ; {
		if due {
			r.beat(ctx)
		}
		due = true
		select {
		case <-ctx.Done():
			r.withdraw()
			return
		case <-t.C:
		case <-r.n.work.Changes():
		case <-r.n.endpointMoved:
			r.link.drop() // made from the old address, it may lead nowhere now
		case <-check.C:
			due = r.leaderMoved() // a look only: beats stay 20 s apart
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
	r.link.drop()
	r.workerIDs = map[string]string{}
	return true
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
	if r.link.conn != nil {
		return nil
	}
	addr := r.n.schedulerAddr()
	if addr == "" {
		return errors.New("no leader is known")
	}
	r.leader, _ = r.n.cons.Leader()
	return r.link.dial(ctx, addr)
}

// do sends one scheduler verb over the link, which follows not-leader: registrations made
// with the old leader are forgotten then, and a verb other than REGISTER ends the beat (a
// heartbeat names ids only the old leader gave).
func (r *registrar) do(ctx context.Context, op wire.Op, payload []byte) ([]byte, error) {
	body, err := r.link.do(ctx, op, payload, func() error {
		r.workerIDs = map[string]string{}
		if op != wire.OpRegister {
			return errReregister
		}
		return nil
	})
	var ref wire.Refusal
	if errors.As(err, &ref) && ref.Code == wire.CodeNoWorker {
		r.workerIDs = map[string]string{} // the scheduler forgot us: register again
	}
	return body, err
}

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
	load := r.n.load(r.load)
	for _, id := range r.workerIDs {
		to := r.link.server()
		load.History = r.n.historyOut.Pending(to) // nothing after the first has been acknowledged
		req := verbs.HeartbeatRequest{WorkerID: id, InFlight: uint32(st.InFlight), Load: load}
		if _, err := r.do(ctx, wire.OpHeartbeat, req.Append(nil)); err != nil {
			return err
		}
		if h := load.History; len(h) > 0 && r.link.server() == to {
			r.n.historyOut.Acknowledged(to, h[len(h)-1].StartMs)
		}
	}
	return nil
}

// withdraw retracts every registration as the node stops, on a new connection when the one
// kept between beats was closed as idle, so the scheduler stops granting this worker at once
// rather than 90 s later.
func (r *registrar) withdraw() {
	if len(r.workerIDs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if r.ensureConn(ctx) != nil {
		return // the scheduler forgets the entries after 90 s of silence instead
	}
	for _, id := range r.workerIDs {
		if _, err := r.link.do(ctx, wire.OpWithdraw, verbs.WithdrawRequest{WorkerID: id}.Append(nil), nil); err != nil {
			break // the link is dropped; so are the entries, 90 s from now
		}
	}
	r.link.drop()
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
