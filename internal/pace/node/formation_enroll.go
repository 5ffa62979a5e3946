package node

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// The joining side's clocks (pace-node §9.2).
const (
	abandonAfter  = 10 * time.Minute // no signed answer this long: abandon, retry later
	rejectedFor   = time.Hour        // a fleet that rejected this node is not asked again for this long
	logNoFleetGap = time.Minute
)

// askState is where this node stands with the fleet it asks: since when it asks, the last signed
// answer, the leader's latest challenge, and the fleets that rejected it.
type askState struct {
	mu         sync.Mutex
	since      time.Time
	lastSigned time.Time
	challenge  []byte
	rejected   map[string]time.Time // cluster → not asked again before
	lastNoLog  time.Time
}

func (a *askState) start(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.since, a.lastSigned, a.challenge = now, now, nil
}

func (a *askState) rejectedNow(cluster string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return now.Before(a.rejected[cluster])
}

// findFleet is the fleet this node yields to: a --fleet-seed's first, then one discovery proved.
func (n *Node) findFleet(ctx context.Context) (*bootstrap, error) {
	var errs []error
	if len(n.plan.Cfg.FleetSeeds) > 0 {
		b, err := n.askSeeds(ctx)
		if err == nil && !n.asking.rejectedNow(b.ClusterID, n.now()) {
			return b, nil
		}
		errs = append(errs, err)
	}
	for _, cand := range n.discovered.yieldCandidates() {
		if n.asking.rejectedNow(cand.cluster, n.now()) {
			continue
		}
		b, err := n.leaderOf(ctx, cand.leaderEndpoint)
		if err == nil && (cand.cluster == "" || b.ClusterID == cand.cluster) && bytes.Equal(mustParseKey(b.Key), cand.leaderKey) {
			return b, nil
		}
		if err == nil {
			err = errors.New("its leader did not prove the key its members named")
		}
		errs = append(errs, fmt.Errorf("a fleet seen on the segment, led at %s: %w", cand.leaderEndpoint, err))
	}
	if len(errs) == 0 {
		return nil, errors.New("none seen yet")
	}
	return nil, errors.Join(errs...)
}

func mustParseKey(text string) []byte {
	k, _ := edkey.Parse(text)
	return k
}

func (n *Node) logNoFleet(err error) {
	n.asking.mu.Lock()
	due := n.now().Sub(n.asking.lastNoLog) >= logNoFleetGap
	if due {
		n.asking.lastNoLog = n.now()
	}
	n.asking.mu.Unlock()
	if due {
		n.log.Info("no fleet to join yet; serving this machine's builds as a cluster of one", "seeds", n.plan.Cfg.FleetSeeds, "err", err)
	}
}

// pollEnrollment asks the fleet's leader once where this node stands, and acts on a signed answer.
func (n *Node) pollEnrollment(ctx context.Context, b *bootstrap) {
	if n.cons.Status().Mode != consensus.Pending {
		return
	}
	a, err := n.sendEnroll(ctx, b)
	now := n.now()
	if err != nil {
		n.answerFailed(ctx, b, err)
		n.asking.mu.Lock()
		silent := now.Sub(n.asking.lastSigned)
		n.asking.mu.Unlock()
		if silent >= abandonAfter {
			n.enroll.c.joinsAbandoned.Add(1)
			n.log.Warn("no signed answer from the fleet asked for 10 minutes: abandoning, to look again", "fleet", b.ClusterID)
			n.stopAsking(ctx, b, time.Time{})
		}
		return
	}
	n.asking.mu.Lock()
	n.asking.lastSigned, n.asking.challenge = now, a.Challenge
	n.asking.mu.Unlock()
	switch a.Outcome {
	case verbs.EnrollRejected:
		n.log.Warn("the fleet rejected this node; not asking it again for an hour", "fleet", b.ClusterID)
		n.stopAsking(ctx, b, now.Add(rejectedFor))
	case verbs.EnrollApproved:
		n.approved(ctx, b, a.Roster)
	}
}

// answerFailed follows a not-leader answer to the fleet's new leader, and logs a refusal (an
// operator can act on it: a taken id, a revoked key, a full list).
func (n *Node) answerFailed(ctx context.Context, b *bootstrap, err error) {
	var ref wire.Refusal
	switch {
	case errors.As(err, &ref) && ref.Code == wire.CodeNotLeader && ref.Message != "":
		nb, lerr := n.leaderOf(ctx, ref.Message)
		switch {
		case lerr != nil:
		case nb.ClusterID == b.ClusterID:
			n.boot.Store(nb)
			n.log.Info("the fleet asked has a new leader", "fleet", nb.ClusterID, "leader", nb.LeaderID, "at", nb.NodeEndpoint)
		default: // the cluster asked is itself asking (or joined) another fleet: ask that one
			n.log.Info("the cluster asked points at another fleet; asking that one", "asked", b.ClusterID, "now", nb.ClusterID)
			if err := n.yieldTo(ctx, nb); err != nil {
				n.log.Error("asking to join", "fleet", nb.ClusterID, "err", err)
			}
		}
	case errors.As(err, &ref):
		n.log.Warn("the fleet's leader refused this node's request to join", "fleet", b.ClusterID, "code", ref.Code, "why", ref.Message)
	default:
		n.log.Debug("asking the fleet's leader", "fleet", b.ClusterID, "at", b.NodeEndpoint, "err", err)
	}
}

// sendEnroll sends one signed ENROLL and returns the answer once its signature verified under
// the key that proved the fleet asked; anything else is no answer.
func (n *Node) sendEnroll(ctx context.Context, b *bootstrap) (verbs.EnrollAnswer, error) {
	req := verbs.EnrollRequest{NodeID: n.id.NodeID, NodeEndpoint: n.endpoint(), RaftEndpoint: n.consensusEndpoint(),
		Role: verbs.EnrollRoleLearner, Key: n.id.Key.Public()}
	n.asking.mu.Lock()
	req.Challenge = n.asking.challenge
	n.asking.mu.Unlock()
	if _, err := rand.Read(req.Nonce[:]); err != nil {
		return verbs.EnrollAnswer{}, err
	}
	req.Signature = n.id.Key.Sign(wire.LabelEnrollRequest, req.AppendUnsigned(nil))
	body, err := exchangeOnce(ctx, b.NodeEndpoint, wire.OpEnroll, req.Append(nil), wire.MaxSealedReplyPayload)
	if err != nil {
		return verbs.EnrollAnswer{}, err
	}
	a, signed, err := verbs.ParseEnrollAnswer(body)
	switch {
	case err != nil:
		return verbs.EnrollAnswer{}, err
	case a.Key == nil || !identity.Verify(a.Key, a.Signature, wire.LabelEnrollAdmission, req.Nonce[:], []byte(req.NodeID), signed):
		n.enroll.c.admissionsUnverified.Add(1)
		return verbs.EnrollAnswer{}, errors.New("an unsigned answer, or one whose signature does not verify")
	case edkey.Text(a.Key) != b.Key:
		n.enroll.c.admissionsUnverified.Add(1)
		return verbs.EnrollAnswer{}, fmt.Errorf("answered by key %s, not the key %s that proved the fleet", edkey.Text(a.Key), b.Key)
	}
	return a, nil
}

// approved checks the roster an approval carried and joins: it must be the fleet asked (and
// pinned) and record this node under this node's key.
func (n *Node) approved(ctx context.Context, b *bootstrap, record []byte) {
	r, err := verbs.ParseRoster(record)
	if err != nil {
		n.enroll.c.admissionsRefused.Add(1)
		n.log.Warn("an approval whose roster does not parse", "fleet", b.ClusterID, "err", err)
		return
	}
	if pin := n.plan.Cfg.FleetID.ClusterID; pin != "" && r.ClusterID != pin {
		n.enroll.c.admissionsRefusedPin.Add(1)
		n.log.Warn("an approval into a cluster --fleet-id does not pin", "cluster", r.ClusterID, "pinned", pin)
		return
	}
	me, ok := r.Member(n.id.NodeID)
	if r.ClusterID != b.ClusterID || !ok || !bytes.Equal(me.Key, n.id.Key.Public()) {
		n.enroll.c.admissionsRefused.Add(1)
		n.log.Warn("an approval whose roster does not record this node under its key", "fleet", r.ClusterID)
		return
	}
	n.log.Info("approved by the fleet", "fleet", r.ClusterID, "roster", verbs.RosterFingerprint(record), "members", len(r.Members))
	n.joinFleet(ctx, b)
}

// joinFleet dissolves this node's own cluster (archived) and makes it the fleet's learner. Both
// an approval and the leader accepting this node's consensus link lead here; the first wins.
func (n *Node) joinFleet(ctx context.Context, b *bootstrap) {
	n.joinMu.Lock()
	defer n.joinMu.Unlock()
	if n.cons.Status().Mode != consensus.Pending {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := n.cons.Join(ctx, b.ClusterID); err != nil {
		n.log.Error("admitted by the fleet, but could not join it", "fleet", b.ClusterID, "err", err)
		return
	}
	n.counters.formationJoins.Add(1)
	n.log.Info("admitted: this node's own cluster is dissolved and archived; it is now a learner of the fleet",
		"fleet", b.ClusterID, "leader", b.LeaderID)
}

// stopAsking returns to a cluster of one, forgetting the fleet asked (until, when set, that
// fleet is not asked again).
func (n *Node) stopAsking(ctx context.Context, b *bootstrap, until time.Time) {
	n.asking.mu.Lock()
	if !until.IsZero() {
		if n.asking.rejected == nil {
			n.asking.rejected = map[string]time.Time{}
		}
		n.asking.rejected[b.ClusterID] = until
	}
	n.asking.mu.Unlock()
	n.boot.Store(nil)
	if err := os.Remove(filepath.Join(n.plan.StateDir, bootstrapFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		n.log.Error("forgetting the fleet asked", "err", err)
	}
	if err := n.cons.SetPending(ctx, false); err != nil {
		n.log.Error("returning to a cluster of one", "err", err)
	}
}

// exchangeOnce sends one pre-credential request to addr and returns the Ok body; a refusal is
// a wire.Refusal error.
func exchangeOnce(ctx context.Context, addr string, op wire.Op, payload []byte, maxReply uint32) ([]byte, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write(machineticket.Request(op, payload)); err != nil {
		return nil, err
	}
	_, body, err := wire.ReadReply(bufio.NewReader(nc), op, maxReply, nil)
	return body, err
}
