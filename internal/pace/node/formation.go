package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/consensus"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/fleet"
	"github.com/buildfleet/buildfleet/internal/pace/identity"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// bootstrap is the fleet this node asks to join (pace-node §9.2, with --fleet-seed): its
// cluster, and the leader whose key this node trusts until the fleet's own state arrives.
type bootstrap struct {
	ClusterID    string `json:"cluster_id"`
	LeaderID     string `json:"leader_id"`
	RaftEndpoint string `json:"raft_endpoint"`
	NodeEndpoint string `json:"node_endpoint"`
	Key          string `json:"key"`
}

// bootstrapFile, in the state directory, keeps the fleet asked across restarts.
const bootstrapFile = "fleet-endpoints"

// pollEvery paces looking for a fleet and polling its leader while waiting for approval.
const pollEvery = 5 * time.Second

func (n *Node) loadBootstrap() {
	b, err := os.ReadFile(filepath.Join(n.plan.StateDir, bootstrapFile))
	if err != nil {
		return
	}
	var boot bootstrap
	if json.Unmarshal(b, &boot) == nil && boot.ClusterID != "" {
		n.boot.Store(&boot)
		n.asking.start(n.now()) // a restart is a fresh ten minutes to hear from the fleet asked
	}
}

// bootstrapRoster is the voter a node asking to join trusts: the fleet's leader.
func (n *Node) bootstrapRoster() []fleet.Member {
	b := n.boot.Load()
	if b == nil {
		return nil
	}
	key, err := edkey.Parse(b.Key)
	if err != nil {
		return nil
	}
	return []fleet.Member{{ID: b.LeaderID, Seat: fleet.Voter, RaftEndpoint: b.RaftEndpoint, NodeEndpoint: b.NodeEndpoint, Key: key}}
}

// seekFleet, on a node that still leads its own cluster of one, looks for a fleet to join
// (pace-node §9.2): the --fleet-seed endpoints first, then fleets discovery proved on the
// segment. Once it yields to one, it goes pending and polls the fleet's leader with ENROLL until
// an operator approves or rejects it there. Discovery admits nobody; nor does this.
func (n *Node) seekFleet(ctx context.Context) {
	if len(n.plan.Cfg.FleetSeeds) == 0 && !n.discoveryOn() {
		return
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		mode := n.cons.Status().Mode
		if mode != consensus.Solitary && mode != consensus.Pending || n.cons.State().Len() > 1 {
			return // a member of a fleet now
		}
		if b := n.boot.Load(); b == nil {
			n.askToJoin(ctx)
		} else {
			n.pollEnrollment(ctx, b)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (n *Node) askToJoin(ctx context.Context) {
	b, err := n.findFleet(ctx)
	if err != nil {
		n.logNoFleet(err)
		return
	}
	if err := n.yieldTo(ctx, b); err != nil {
		n.log.Error("asking to join", "fleet", b.ClusterID, "err", err)
	}
}

// yieldTo records the fleet asked and goes pending (pace_formation_yields_total).
func (n *Node) yieldTo(ctx context.Context, b *bootstrap) error {
	data, _ := json.Marshal(b)
	if err := writeFileAtomic(filepath.Join(n.plan.StateDir, bootstrapFile), data); err != nil {
		return fmt.Errorf("recording the fleet asked: %w", err)
	}
	n.boot.Store(b)
	n.asking.start(n.now())
	if err := n.cons.SetPending(ctx, true); err != nil {
		return err
	}
	n.enroll.c.yields.Add(1)
	n.logAdmitLine(b)
	return nil
}

// logAdmitLine tells the operator what admits this node, and what then makes it a voter.
func (n *Node) logAdmitLine(b *bootstrap) {
	key := n.id.Key.PublicText()
	n.log.Info("asking a fleet to admit this node: it waits until an operator approves it there",
		"fleet", b.ClusterID, "leader", b.LeaderID, "at", b.NodeEndpoint,
		"approve_with", fmt.Sprintf("pace-node --scheduler=%s --enroll-approve=%s@%s", b.NodeEndpoint, n.id.NodeID, key),
		"voter_with", fmt.Sprintf("pace-node --scheduler=%s --cluster-admit=%s=%s@%s", b.NodeEndpoint, n.id.NodeID, n.consensusEndpoint(), key))
}

// askSeeds asks each seed in turn, following one hop to the leader a seed names.
func (n *Node) askSeeds(ctx context.Context) (*bootstrap, error) {
	var errs []error
	for _, seed := range n.plan.Cfg.FleetSeeds {
		b, err := n.leaderOf(ctx, seed)
		if err == nil {
			return b, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", seed, err))
	}
	return nil, errors.Join(errs...)
}

func (n *Node) leaderOf(ctx context.Context, seed string) (*bootstrap, error) {
	s, key, err := askSummary(ctx, seed)
	if err == nil && s.NodeID != s.LeaderID && s.LeaderNodeEndpoint != "" {
		s, key, err = askSummary(ctx, s.LeaderNodeEndpoint)
	}
	switch {
	case err != nil:
		return nil, err
	case s.ClusterID == n.cons.State().ClusterID():
		return nil, errors.New("it is this node's own cluster")
	case s.NodeID != s.LeaderID || s.RaftEndpoint == "":
		return nil, fmt.Errorf("neither it nor the leader it names (%q) answered as the leader", s.LeaderID)
	}
	if err := n.checkPin(s.ClusterID, key); err != nil {
		return nil, err
	}
	return &bootstrap{ClusterID: s.ClusterID, LeaderID: s.NodeID, RaftEndpoint: s.RaftEndpoint,
		NodeEndpoint: s.NodeEndpoint, Key: edkey.Text(key)}, nil
}

// checkPin applies --fleet-id: only the pinned cluster, and only a pinned key's word.
func (n *Node) checkPin(cluster string, key []byte) error {
	pin := n.plan.Cfg.FleetID
	if pin.ClusterID == "" {
		n.log.Info("trusting the fleet's key on first use (no --fleet-id pin)", "fleet", cluster, "key", edkey.Text(key))
		return nil
	}
	if cluster != pin.ClusterID {
		n.counters.formationYieldsRefusedPin.Add(1)
		return fmt.Errorf("fleet %s is not the one --fleet-id pins (%s)", cluster, pin.ClusterID)
	}
	if !slices.ContainsFunc(pin.Keys, func(k []byte) bool { return string(k) == string(key) }) {
		n.counters.formationYieldsRefusedPin.Add(1)
		return fmt.Errorf("the leader's key %s is not one --fleet-id pins", edkey.Text(key))
	}
	return nil
}

// askSummary asks addr for its signed fleet summary and checks the signature.
func askSummary(ctx context.Context, addr string) (verbs.FleetSummary, []byte, error) {
	var req verbs.FleetSummaryRequest
	if _, err := rand.Read(req.Nonce[:]); err != nil {
		return verbs.FleetSummary{}, nil, err
	}
	body, err := exchangeOnce(ctx, addr, wire.OpFleetSummary, req.Append(nil), wire.MaxRefusalReply)
	if err != nil {
		return verbs.FleetSummary{}, nil, err
	}
	ok, err := verbs.ParseFleetSummaryOk(body)
	if err != nil {
		return verbs.FleetSummary{}, nil, err
	}
	if !identity.Verify(ok.Key, ok.Signature, wire.LabelFleetSummary, req.Nonce[:], ok.SummaryRaw) {
		return verbs.FleetSummary{}, nil, errors.New("the summary's signature does not verify under the key it came with")
	}
	return ok.Summary, ok.Key, nil
}

// linkAccepted is told of every consensus link this node dialled that the other end accepted.
// A node asking to join is admitted when the fleet's leader accepts its link (an operator
// admitted it there, by --enroll-approve or --cluster-admit): it joins as the fleet's learner.
func (n *Node) linkAccepted(peer string) {
	b := n.boot.Load()
	if b == nil || peer != b.LeaderID || n.cons.Status().Mode != consensus.Pending {
		return
	}
	n.joinFleet(context.Background(), b)
}

// writeFileAtomic writes a small state file through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
