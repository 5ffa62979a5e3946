package discovery

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// record is one node of the table: its last beacon's claims, and its last accepted proof.
type record struct {
	heard Heard
	// what was last proven, so that an unchanged beacon from the same address is not
	// challenged again before reproveAfter
	provenHash [sha256.Size]byte
	provenAddr netip.AddrPort
	key        ed25519.PublicKey
}

// table is the bounded set of nodes heard and proven, keyed by node id.
type table struct {
	m         map[string]*record
	lastPrune time.Time
}

// heard records a beacon's claims. An authenticated peer whose beacon claims another
// cluster or endpoint loses its status until it proves again (pace-node §9.1); lost says
// so. ok is false when the table is full and s.NodeID has no record.
func (t *table) heard(s verbs.FleetSummary, from netip.AddrPort, now time.Time, staleAfter time.Duration) (lost, ok bool) {
	r := t.m[s.NodeID]
	if r == nil {
		if !t.room(now, staleAfter) {
			return false, false
		}
		r = &record{}
		t.m[s.NodeID] = r
	}
	h := &r.heard
	lost = h.Authenticated && (h.ClusterID != s.ClusterID || h.NodeEndpoint != s.NodeEndpoint || h.RaftEndpoint != s.RaftEndpoint)
	if lost {
		h.Authenticated, h.ProvenAt = false, time.Time{}
	}
	*h = Heard{NodeID: s.NodeID, ClusterID: s.ClusterID, NodeEndpoint: s.NodeEndpoint, RaftEndpoint: s.RaftEndpoint,
		Addr: from, HeardAt: now, ProvenAt: h.ProvenAt, Authenticated: h.Authenticated}
	return lost, true
}

// needsProof reports whether a beacon must be challenged: nothing proven yet from this
// node at this address with these exact summary bytes, a member of this cluster not
// authenticated, or a proof older than reprove.
func (t *table) needsProof(id string, raw []byte, from netip.AddrPort, now time.Time, reprove time.Duration, member bool) bool {
	r := t.m[id]
	return r == nil || r.heard.ProvenAt.IsZero() || (member && !r.heard.Authenticated) || r.provenAddr != from ||
		r.provenHash != sha256.Sum256(raw) || now.Sub(r.heard.ProvenAt) >= reprove
}

// proven records an accepted proof (authenticated: a member under its roster key). When
// the table is full it evicts the node heard longest ago that is not authenticated; ok is
// false when every record is an authenticated peer.
func (t *table) proven(s verbs.FleetSummary, raw []byte, key ed25519.PublicKey, from netip.AddrPort, now time.Time, authenticated bool) (ok bool) {
	r := t.m[s.NodeID]
	if r == nil {
		if len(t.m) >= MaxNodes && !t.evictOldest() {
			return false
		}
		r = &record{}
		t.m[s.NodeID] = r
	}
	r.heard = Heard{NodeID: s.NodeID, ClusterID: s.ClusterID, NodeEndpoint: s.NodeEndpoint, RaftEndpoint: s.RaftEndpoint,
		Addr: from, HeardAt: now, ProvenAt: now, Authenticated: authenticated}
	r.provenHash, r.provenAddr, r.key = sha256.Sum256(raw), from, slices.Clone(key)
	return true
}

// refused drops a node's authenticated status: its proof was refused by the roster.
func (t *table) refused(id string) {
	if r := t.m[id]; r != nil {
		r.heard.Authenticated, r.heard.ProvenAt = false, time.Time{}
	}
}

// room makes space for a new record by dropping unauthenticated nodes unheard for
// staleAfter, at most once per pruneEvery.
func (t *table) room(now time.Time, staleAfter time.Duration) bool {
	if len(t.m) < MaxNodes {
		return true
	}
	if now.Sub(t.lastPrune) >= pruneEvery {
		t.lastPrune = now
		for id, r := range t.m {
			if !r.heard.Authenticated && now.Sub(r.heard.HeardAt) >= staleAfter {
				delete(t.m, id)
			}
		}
	}
	return len(t.m) < MaxNodes
}

func (t *table) evictOldest() bool {
	var oldest *record
	for _, r := range t.m {
		if !r.heard.Authenticated && (oldest == nil || r.heard.HeardAt.Before(oldest.heard.HeardAt)) {
			oldest = r
		}
	}
	if oldest != nil {
		delete(t.m, oldest.heard.NodeID)
	}
	return oldest != nil
}

// peers lists the authenticated members of cluster whose key the roster still holds and
// has not revoked, asked now: a forget or a revocation takes effect at the next listing.
func (t *table) peers(cluster string, roster Roster) []Peer {
	var out []Peer
	for _, r := range t.m {
		h := r.heard
		if !h.Authenticated || h.ClusterID != cluster {
			continue
		}
		if key, ok := roster.MemberKey(h.NodeID); !ok || !bytes.Equal(key, r.key) || roster.Revoked(r.key) {
			continue
		}
		out = append(out, Peer{NodeID: h.NodeID, ClusterID: h.ClusterID, NodeEndpoint: h.NodeEndpoint,
			RaftEndpoint: h.RaftEndpoint, Addr: r.provenAddr, Key: slices.Clone(r.key), ProvenAt: h.ProvenAt})
	}
	slices.SortFunc(out, func(a, b Peer) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out
}

func (t *table) list() []Heard {
	out := make([]Heard, 0, len(t.m))
	for _, r := range t.m {
		out = append(out, r.heard)
	}
	slices.SortFunc(out, func(a, b Heard) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out
}

func (t *table) authenticated() int {
	n := 0
	for _, r := range t.m {
		if r.heard.Authenticated {
			n++
		}
	}
	return n
}

func (t *table) isAuthenticated(id string) bool {
	r := t.m[id]
	return r != nil && r.heard.Authenticated
}
