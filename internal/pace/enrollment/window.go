// Package enrollment is the leader's enrollment window (pace-node §9.3): the bounded list of
// machines asking to join the fleet, the operator's approvals and rejections, and the
// time-boxed automatic window. It is a pure core: the node passes the time and randomness,
// checks signatures and the fleet's record before it asks, and proposes the admission an
// approval calls for. The list lives in the leader's memory only; a new leader starts empty.
package enrollment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
)

// Bounds (pace-node §9.3).
const (
	MaxRows          = verbs.MaxEnrollmentRows // rows on the list
	MaxUndecidedHost = 4                       // undecided rows per first-seen source host
	Unpolled         = 10 * time.Minute        // an undecided row unpolled this long expires
	MaxAutoApprove   = 24 * time.Hour          // the longest automatic window
)

// Errors Ask and the operator verbs return; the node maps them to wire codes.
var (
	ErrFull        = errors.New("the enrollment list is full")
	ErrHostFull    = errors.New("this source host has its quota of undecided enrollments")
	ErrNoRow       = errors.New("no machine by that id is asking to join")
	ErrKeyMismatch = errors.New("the key named is not the key that machine asked with")
	ErrWindowLong  = errors.New("an automatic window is time-boxed to a day")
)

// Ask is one poll of ENROLL after the node verified its signature.
type Ask struct {
	ID           string
	NodeEndpoint string
	RaftEndpoint string
	Key          []byte
	Challenge    []byte // as the poll carried it
	Host         netip.Addr
}

// Row is one machine on the list.
type Row struct {
	ID, NodeEndpoint, RaftEndpoint string
	Key                            []byte
	Host, FirstHost                netip.Addr
	FirstSeen, LastPolled          time.Time
	Attempts, ClaimsChanged        uint32
	Decision                       uint8 // verbs.RowPending, RowApproved, RowRejected
	Challenge                      [verbs.ChallengeLen]byte
	RosterFP                       []byte
	AutoApprovedAt                 time.Time // zero unless the automatic window approved it
}

// Counters are the window's own (pace_enrollment_* in pace-node §10.6).
type Counters struct {
	RefusedFull, RefusedHostCap, Cleared, Expired, ApprovalsManual, ApprovalsAuto, KeyMismatch atomic.Uint64
}

// Window is the list. Not safe for concurrent use: the node serialises calls.
type Window struct {
	rows      []*Row
	autoUntil time.Time
	random    io.Reader
	Counters  *Counters
}

// New is an empty window drawing challenges from random.
func New(random io.Reader, c *Counters) *Window { return &Window{random: random, Counters: c} }

// Answer is what a poll is told: the row's decision, and, while pending, its challenge.
// Admit is set when the automatic window approved the row on this poll: the node records it
// in the fleet before answering (and calls Revert if that fails).
type Answer struct {
	Decision  uint8
	Challenge [verbs.ChallengeLen]byte
	Admit     bool
	Row       Row
}

// Ask records or refreshes the asking machine's row and says where it stands.
func (w *Window) Ask(a Ask, now time.Time) (Answer, error) {
	w.Expire(now)
	r := w.find(a.ID)
	if r == nil {
		var err error
		if r, err = w.add(a, now); err != nil {
			return Answer{}, err
		}
	} else if !bytes.Equal(r.Key, a.Key) {
		// A row keeps its first key: another key under this id is answered pending and never
		// recorded, so nobody can take over a machine's row by polling under its id.
		r.ClaimsChanged++
		return Answer{Decision: verbs.RowPending, Challenge: r.Challenge}, nil
	}
	r.NodeEndpoint, r.RaftEndpoint = a.NodeEndpoint, a.RaftEndpoint // the same key may move while it waits
	r.Attempts++
	r.LastPolled, r.Host = now, a.Host
	ans := Answer{Decision: r.Decision, Challenge: r.Challenge}
	if r.Decision == verbs.RowPending && now.Before(w.autoUntil) {
		r.Decision, r.AutoApprovedAt = verbs.RowApproved, now
		w.Counters.ApprovalsAuto.Add(1)
		ans.Decision, ans.Admit = verbs.RowApproved, true
	}
	if r.Decision == verbs.RowPending && bytes.Equal(a.Challenge, r.Challenge[:]) {
		w.rechallenge(r) // a challenge answered is spent: the next poll must carry a new one
		ans.Challenge = r.Challenge
	}
	ans.Row = *r
	return ans, nil
}

func (w *Window) add(a Ask, now time.Time) (*Row, error) {
	if len(w.rows) >= MaxRows {
		w.Counters.RefusedFull.Add(1)
		return nil, ErrFull
	}
	undecided := 0
	for _, r := range w.rows {
		if r.Decision == verbs.RowPending && r.FirstHost == a.Host {
			undecided++
		}
	}
	if undecided >= MaxUndecidedHost {
		w.Counters.RefusedHostCap.Add(1)
		return nil, ErrHostFull
	}
	r := &Row{ID: a.ID, NodeEndpoint: a.NodeEndpoint, RaftEndpoint: a.RaftEndpoint, Key: slices.Clone(a.Key),
		Host: a.Host, FirstHost: a.Host, FirstSeen: now, Decision: verbs.RowPending}
	w.rechallenge(r)
	w.rows = append(w.rows, r)
	return r, nil
}

func (w *Window) rechallenge(r *Row) {
	if _, err := io.ReadFull(w.random, r.Challenge[:]); err != nil {
		r.Challenge = [verbs.ChallengeLen]byte{} // no randomness: a zero challenge still works, only weaker
	}
}

// Revert undoes an approval the node could not record in the fleet: the row waits again.
func (w *Window) Revert(id string) {
	if r := w.find(id); r != nil && r.Decision == verbs.RowApproved {
		r.Decision, r.AutoApprovedAt = verbs.RowPending, time.Time{}
	}
}

// Approve approves id under key, which must be the key it asked with. The node records the
// admission; a row already approved is approved again (an operator retrying is harmless).
func (w *Window) Approve(id string, key []byte) (Row, error) {
	r := w.find(id)
	switch {
	case r == nil:
		return Row{}, fmt.Errorf("%w: %q", ErrNoRow, id)
	case !bytes.Equal(r.Key, key):
		w.Counters.KeyMismatch.Add(1)
		return Row{}, fmt.Errorf("%w (%s asked under another key)", ErrKeyMismatch, id)
	}
	if r.Decision != verbs.RowApproved {
		w.Counters.ApprovalsManual.Add(1)
	}
	r.Decision = verbs.RowApproved
	return *r, nil
}

// SetRosterFingerprint records what roster an approved row was answered.
func (w *Window) SetRosterFingerprint(id string, fp []byte) {
	if r := w.find(id); r != nil {
		r.RosterFP = slices.Clone(fp)
	}
}

// Reject rejects id: its polls are answered rejected until the list is cleared.
func (w *Window) Reject(id string) error {
	r := w.find(id)
	if r == nil {
		return fmt.Errorf("%w: %q", ErrNoRow, id)
	}
	r.Decision = verbs.RowRejected
	return nil
}

// Clear empties the list, and reports how many rows went.
func (w *Window) Clear() int {
	n := len(w.rows)
	w.rows = nil
	w.Counters.Cleared.Add(uint64(n))
	return n
}

// AutoApprove opens the automatic window until now+d and returns the rows already waiting,
// which it approves too: the node records each.
func (w *Window) AutoApprove(d time.Duration, now time.Time) ([]Row, error) {
	if d <= 0 || d > MaxAutoApprove {
		return nil, ErrWindowLong
	}
	w.autoUntil = now.Add(d)
	var approved []Row
	for _, r := range w.rows {
		if r.Decision == verbs.RowPending {
			r.Decision, r.AutoApprovedAt = verbs.RowApproved, now
			w.Counters.ApprovalsAuto.Add(1)
			approved = append(approved, *r)
		}
	}
	return approved, nil
}

// AutoOff closes the automatic window.
func (w *Window) AutoOff() { w.autoUntil = time.Time{} }

// AutoLeft is how long the automatic window stays open; 0 when closed.
func (w *Window) AutoLeft(now time.Time) time.Duration { return max(w.autoUntil.Sub(now), 0) }

// Expire drops undecided rows unpolled for Unpolled.
func (w *Window) Expire(now time.Time) {
	w.rows = slices.DeleteFunc(w.rows, func(r *Row) bool {
		gone := r.Decision == verbs.RowPending && now.Sub(r.lastSeen()) >= Unpolled
		if gone {
			w.Counters.Expired.Add(1)
		}
		return gone
	})
}

func (r *Row) lastSeen() time.Time {
	if r.LastPolled.IsZero() {
		return r.FirstSeen
	}
	return r.LastPolled
}

// Rows is a copy of the list, oldest first.
func (w *Window) Rows() []Row {
	out := make([]Row, len(w.rows))
	for i, r := range w.rows {
		out[i] = *r
	}
	return out
}

// Undecided counts rows waiting for an operator.
func (w *Window) Undecided() int {
	n := 0
	for _, r := range w.rows {
		if r.Decision == verbs.RowPending {
			n++
		}
	}
	return n
}

func (w *Window) find(id string) *Row {
	for _, r := range w.rows {
		if r.ID == id {
			return r
		}
	}
	return nil
}
