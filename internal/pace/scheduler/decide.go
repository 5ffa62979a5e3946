package scheduler

import (
	"container/heap"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// ErrSign: the Signer failed, so no grant could be issued. The lease is
// rolled back; the client compiles locally.
var ErrSign = errors.New("scheduler: could not sign the lease")

// Lease decides a LEASE in the order of pace-node §6.2:
// (1) the key already in flight ⇒ already-in-flight; (2) no live entry
// with the byte-identical fingerprint ⇒ no-worker (all of them on the
// client's exclusion list: still no-worker, counted apart); (3) none with
// offerable capacity ⇒ no-capacity when they are full of this fleet's own
// work, withdrawn when free on paper but pulled back; (4) grant the entry
// with the most free slots, ties on lowest utilization, then the least
// recently picked, then the endpoint. Refusals are wire.Refusal errors.
func (s *Scheduler) Lease(req verbs.LeaseRequest, p Params) (verbs.LeaseGrant, error) {
	now := s.cfg.Now()
	lifetime := p.lifetime()
	s.mu.Lock()
	e, outcome, refusal := s.decideLocked(req, now)
	if e == nil {
		s.mu.Unlock()
		s.decided(outcome)
		return verbs.LeaseGrant{}, refusal
	}
	l, claims := s.grantLocked(e, req, now, lifetime, p)
	grant := verbs.LeaseGrant{Endpoint: e.key.endpoint, WorkerCodecs: e.codecs,
		LifetimeMs: uint32(lifetime.Milliseconds()), DialHint: e.dialHint, WorkerKey: claims.WorkerKey}
	s.mu.Unlock()

	token, err := s.cfg.Signer.IssueLease(claims)
	s.mu.Lock()
	if err != nil || token == "" {
		if s.leases[l.key] == l {
			s.removeLeaseLocked(l, false)
		}
		s.mu.Unlock()
		s.decided(RefusedSignFailed)
		if err == nil {
			err = errors.New("empty token")
		}
		return verbs.LeaseGrant{}, fmt.Errorf("%w: %w", ErrSign, err)
	}
	l.token = token
	s.mu.Unlock()
	s.counters.LeasesGranted.Add(1)
	s.decided(Granted)
	grant.Token = token
	return grant, nil
}

// decideLocked runs steps 1–3 and returns the entry to grant, or the
// refusal and its cause with its counter incremented.
func (s *Scheduler) decideLocked(req verbs.LeaseRequest, now time.Time) (*entry, Outcome, error) {
	if l := s.leases[req.Key]; l != nil {
		if !now.After(l.expiresAt) {
			s.counters.LeasesDuplicate.Add(1)
			return nil, RefusedAlreadyInFlight, wire.Refuse(wire.CodeAlreadyInFlight, "")
		}
		s.expireLeaseLocked(l)
	}
	p := s.pickLocked(req, now)
	switch {
	case p.none:
		s.noteUnservedLocked(req, now)
		s.counters.LeasesNoWorker.Add(1)
		return nil, RefusedNoWorker, wire.Refuse(wire.CodeNoWorker, "")
	case p.allExcluded:
		s.counters.LeasesAllExcluded.Add(1)
		return nil, RefusedAllExcluded, wire.Refuse(wire.CodeNoWorker, "every worker with this toolchain is on the client's exclusion list")
	case p.best.free > 0:
		return p.best, Granted, nil
	case !p.best.why.full():
		s.counters.LeasesWithdrawn.Add(1)
		return nil, RefusedWithdrawn, wire.Refuse(wire.CodeWithdrawn, "matching workers withdrew their capacity (limited-by: %s)", p.best.why)
	}
	s.counters.LeasesNoCapacity.Add(1)
	return nil, RefusedNoCapacity, wire.Refuse(wire.CodeNoCapacity, "every matching worker is full (limited-by: %s)", p.best.why)
}

// pick is the top of a fingerprint's heap once dead and excluded entries
// are out of the way.
type pick struct {
	best        *entry
	none        bool // no live entry has the fingerprint
	allExcluded bool // every live one is on the client's exclusion list
}

// pickLocked reads the top of the fingerprint's heap. Entries found dead
// on top are expired on the spot (as the sweep would); excluded ones are
// set aside — at most one per exclusion, since an endpoint appears once
// per fingerprint — and put back before returning.
func (s *Scheduler) pickLocked(req verbs.LeaseRequest, now time.Time) pick {
	var asideBuf [verbs.MaxExclusions]*entry
	aside := asideBuf[:0]
	g := s.byFingerprint[req.Fingerprint]
	for g != nil && g.Len() > 0 {
		top := (*g)[0]
		switch {
		case !s.live(top, now):
			s.expireEntryLocked(top)
			g = s.byFingerprint[req.Fingerprint]
			continue
		case len(aside) < cap(aside) && excluded(top.key.endpoint, req.Exclusions):
			aside = append(aside, heap.Pop(g).(*entry))
			continue
		}
		break
	}
	p := pick{none: len(aside) == 0 && (g == nil || g.Len() == 0)}
	if g != nil && g.Len() > 0 {
		p.best = (*g)[0]
	} else {
		p.allExcluded = !p.none
	}
	for _, e := range aside {
		if g == nil {
			s.insertEntryLocked(e)
			g = s.byFingerprint[req.Fingerprint]
			continue
		}
		heap.Push(g, e)
	}
	return p
}

func excluded(endpoint string, exclusions []string) bool {
	for _, x := range exclusions {
		if x == endpoint {
			return true
		}
	}
	return false
}

// grantLocked records the lease (step 4) and returns the claims to sign.
func (s *Scheduler) grantLocked(e *entry, req verbs.LeaseRequest, now time.Time, lifetime time.Duration, p Params) (*lease, Claims) {
	s.serial++
	s.pickSeq++
	e.pickSeq, e.lastPickedAt = s.pickSeq, now
	l := &lease{key: req.Key, serial: s.serial, entryID: e.id, endpoint: e.key.endpoint,
		fingerprint: e.key.fingerprint, machine: e.machine, grantedAt: now, expiresAt: now.Add(lifetime)}
	s.addLeaseLocked(l)
	var workerKey []byte
	if len(e.machine.key) == verbs.KeyLen {
		workerKey = append([]byte(nil), e.machine.key...)
	}
	return l, Claims{Serial: l.serial, Endpoint: l.endpoint, Fingerprint: l.fingerprint, Key: l.key,
		ExpiresAt: l.expiresAt, ClusterID: s.clusterID(p), Epoch: p.Epoch, WorkerKey: workerKey}
}

// noteUnservedLocked remembers a toolchain nobody serves, for the
// unserved-toolchain condition.
func (s *Scheduler) noteUnservedLocked(req verbs.LeaseRequest, now time.Time) {
	if _, ok := s.unserved[req.Fingerprint]; !ok && len(s.unserved) >= MaxUnserved {
		return
	}
	s.unserved[req.Fingerprint] = unservedToolchain{label: req.ToolchainLabel, lastSeen: now}
}

// Release resolves a client's own lease (RELEASE): token and key must
// both match a held lease, else unknown-lease. A release after expiry is
// answered Ok and counted late.
func (s *Scheduler) Release(req verbs.ReleaseRequest) error {
	now := s.cfg.Now()
	s.mu.Lock()
	l := s.leases[req.Key]
	if l != nil && l.token != "" && subtle.ConstantTimeCompare([]byte(l.token), []byte(req.Token)) == 1 {
		late := now.After(l.expiresAt)
		if late {
			s.removeLeaseLocked(l, false)
		} else {
			s.removeLeaseLocked(l, true)
		}
		s.mu.Unlock()
		s.countRelease(late)
		return nil
	}
	late := s.retired.take(req.Token, req.Key)
	s.mu.Unlock()
	if late {
		s.countRelease(true)
		return nil
	}
	if v := s.cfg.Verifier; v != nil && !v.SignedByCluster(req.Token) {
		s.counters.LeasesUnauthorized.Add(1)
	}
	return wire.Refuse(wire.CodeUnknownLease, "")
}

func (s *Scheduler) countRelease(late bool) {
	if late {
		s.counters.LeasesReleasedLate.Add(1)
		return
	}
	s.counters.LeasesReleased.Add(1)
}
