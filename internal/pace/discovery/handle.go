package discovery

import (
	"bytes"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

func claimOf(s verbs.FleetSummary, from netip.AddrPort, challenger string) claim {
	return claim{from: from, nodeID: s.NodeID, nodeEndpoint: s.NodeEndpoint, raftEndpoint: s.RaftEndpoint, cluster: challenger}
}

// onBeacon records a beacon and challenges it unless this node already holds a proof of
// exactly it from that address: a stateless cookie, padded to the beacon's length.
func (e *Engine) onBeacon(b discoverywire.Beacon, from netip.AddrPort, size int) {
	self := e.self()
	if b.Summary.NodeID == self.NodeID {
		return // this node's own broadcast, heard back
	}
	e.counters.BeaconsHeard.Add(1)
	cookie, ok := e.admitBeacon(b, from, self.ClusterID)
	if !ok {
		return
	}
	c, err := discoverywire.AppendChallenge(nil, discoverywire.Challenge{Cookie: cookie, ClusterID: self.ClusterID}, size)
	if err != nil {
		e.counters.RepliesWithheld.Add(1) // cannot fit in the beacon's length: never sent larger
		return
	}
	if e.send(c, from) {
		e.counters.ChallengesSent.Add(1)
	}
}

// admitBeacon records the beacon's claims and decides whether it is challenged, within
// the answer budget, minting the cookie if so.
func (e *Engine) admitBeacon(b discoverywire.Beacon, from netip.AddrPort, cluster string) (Cookie, bool) {
	s, now := b.Summary, e.cfg.Now()
	var cookie Cookie
	var err error
	e.mu.Lock()
	lost, recorded := e.nodes.heard(s, from, now, staleIntervals*e.cfg.Interval)
	need := e.nodes.needsProof(s.NodeID, b.SummaryRaw, from, now, e.cfg.ReproveAfter, s.ClusterID == cluster)
	allowed := need && e.guard.reply(from, now)
	if allowed {
		cookie, err = e.jar.mint(now, claimOf(s, from, cluster))
	}
	e.mu.Unlock()
	if !recorded {
		e.counters.BeaconsOverBound.Add(1)
	}
	if lost {
		e.cfg.Log.Info("discovery: a peer's beacon claims another cluster or endpoint; it is not authenticated until it proves again",
			"node", s.NodeID, "addr", from, "endpoint", s.NodeEndpoint, "raft_endpoint", s.RaftEndpoint)
	}
	switch {
	case need && !allowed:
		e.counters.RepliesWithheld.Add(1)
	case err != nil:
		e.cfg.Log.Error("discovery cannot mint a challenge", "err", err)
	}
	return cookie, allowed && err == nil
}

// onChallenge answers with this node's proof, within the answer budget and never larger
// than the challenge.
func (e *Engine) onChallenge(c discoverywire.Challenge, from netip.AddrPort, size int) {
	e.counters.ChallengesReceived.Add(1)
	now := e.cfg.Now()
	e.mu.Lock()
	allowed := e.guard.reply(from, now)
	e.mu.Unlock()
	if !allowed {
		e.counters.RepliesWithheld.Add(1)
		return
	}
	p := discoverywire.AppendProof(nil, discoverywire.SignProof(e.cfg.Key, c, e.self()))
	if len(p) > size {
		e.counters.RepliesWithheld.Add(1) // the summary grew since the beacon was sent
		return
	}
	if e.send(p, from) {
		e.counters.ProofsSent.Add(1)
	}
}

// onProof checks a proof, cheapest refusal first and the signature before anything it
// claims is believed, then judges it.
func (e *Engine) onProof(p discoverywire.Proof, from netip.AddrPort) {
	e.counters.ProofsReceived.Add(1)
	self := e.self()
	now := e.cfg.Now()
	if !e.mayCheck(p, from, self.ClusterID, now) {
		return
	}
	if !p.Verify(self.ClusterID) {
		e.forged(p, from, now)
		return
	}
	e.mu.Lock()
	e.spent.add(p.Cookie, now, 2*e.cfg.CookieEvery)
	e.mu.Unlock()
	e.judge(p, from, self, now)
}

// mayCheck: the cookie must be one this node minted for that source and claim and not yet
// spent (else unsolicited); the cookie must have failed fewer than twice, its tables have
// room, and the host's and the global signature budgets allow one more check.
func (e *Engine) mayCheck(p discoverywire.Proof, from netip.AddrPort, cluster string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case !e.jar.check(now, claimOf(p.Summary, from, cluster), p.Cookie) || e.spent.count(p.Cookie, now) > 0:
		e.counters.ProofsUnsolicited.Add(1)
		return false
	case e.failed.count(p.Cookie, now) >= MaxFailuresPerCookie,
		!e.spent.room(p.Cookie, now) || !e.failed.room(p.Cookie, now),
		!e.guard.check(from, now):
		e.counters.ChecksWithheld.Add(1)
		return false
	}
	return true
}

// forged counts a failed signature against its cookie and logs the address only: nothing
// else in the proof is believed.
func (e *Engine) forged(p discoverywire.Proof, from netip.AddrPort, now time.Time) {
	e.counters.RefusedForged.Add(1)
	e.mu.Lock()
	e.failed.add(p.Cookie, now, 2*e.cfg.CookieEvery)
	due := e.logs.due("forged "+from.Addr().String(), now)
	e.mu.Unlock()
	if due {
		e.cfg.Log.Warn("discovery: a proof whose signature does not verify, ignored", "addr", from)
	}
}

// judge decides what a verified proof means: another cluster's summary goes to
// formation; a member of this cluster is authenticated only under the key the roster
// holds for it. Discovery admits nobody.
func (e *Engine) judge(p discoverywire.Proof, from netip.AddrPort, self verbs.FleetSummary, now time.Time) {
	s := p.Summary
	if s.ClusterID != self.ClusterID {
		e.foreign(p, from, now)
		return
	}
	key, known := e.cfg.Roster.MemberKey(s.NodeID)
	switch {
	case e.cfg.Roster.Revoked(p.Key):
		e.refuse(&e.counters.RefusedRevokedKey, p, from, now, "discovery: a node proved a key this cluster revoked; ignored")
	case !known || !bytes.Equal(key, p.Key):
		e.refuse(&e.counters.RefusedUnknownKey, p, from, now,
			"discovery: a node proved a key this cluster does not hold for it; discovery admits nobody")
	default:
		e.authenticated(p, from, now)
	}
}

func (e *Engine) refuse(n *atomic.Uint64, p discoverywire.Proof, from netip.AddrPort, now time.Time, msg string) {
	n.Add(1)
	s, text := p.Summary, edkey.Text(p.Key)
	e.mu.Lock()
	e.nodes.refused(s.NodeID)
	due := e.logs.due("refused "+s.NodeID, now)
	e.mu.Unlock()
	if !due {
		return
	}
	raft := s.RaftEndpoint
	if raft == "" {
		raft = "<host>:6680"
	}
	e.cfg.Log.Warn(msg, "node", s.NodeID, "addr", from, "key", text,
		"admit_with", fmt.Sprintf("--cluster-admit=%s=%s@%s", s.NodeID, raft, text))
}

func (e *Engine) authenticated(p discoverywire.Proof, from netip.AddrPort, now time.Time) {
	s := p.Summary
	e.mu.Lock()
	was := e.nodes.isAuthenticated(s.NodeID)
	recorded := e.nodes.proven(s, p.SummaryRaw, p.Key, from, now, true)
	e.mu.Unlock()
	e.counters.ProofsAccepted.Add(1)
	if !recorded {
		e.counters.BeaconsOverBound.Add(1)
	}
	if !was {
		e.cfg.Log.Info("discovery: a member proved its key", "node", s.NodeID, "addr", from, "endpoint", s.NodeEndpoint)
	}
	if e.cfg.OnPeer != nil {
		e.cfg.OnPeer(Peer{NodeID: s.NodeID, ClusterID: s.ClusterID, NodeEndpoint: s.NodeEndpoint,
			RaftEndpoint: s.RaftEndpoint, Addr: from, Key: p.Key, ProvenAt: now})
	}
}

func (e *Engine) foreign(p discoverywire.Proof, from netip.AddrPort, now time.Time) {
	e.mu.Lock()
	recorded := e.nodes.proven(p.Summary, p.SummaryRaw, p.Key, from, now, false)
	e.mu.Unlock()
	e.counters.ForeignProofs.Add(1)
	if !recorded {
		e.counters.BeaconsOverBound.Add(1)
	}
	if e.cfg.OnForeign != nil {
		e.cfg.OnForeign(Proven{Summary: p.Summary, Key: p.Key, From: from, At: now})
	}
}
