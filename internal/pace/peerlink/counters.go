package peerlink

import (
	"errors"
	"sync/atomic"

	"github.com/buildfleet/buildfleet/internal/pace/counter"
)

// Counters are the refusal counters of pace-consensus §7.3.6, one per
// situation on each end, as plain atomics a node exports under the names
// Metrics gives. Count maps an error of this package to its counter.
type Counters struct {
	// The accepting end.
	RefusedUnknownKey       atomic.Uint64
	RefusedProof            atomic.Uint64
	RefusedRevokedKey       atomic.Uint64
	EndedKeyWithdrawn       atomic.Uint64
	RefusedWrongTarget      atomic.Uint64
	RefusedOwnID            atomic.Uint64
	RefusedNoHandshake      atomic.Uint64
	RefusedHandshakeTimeout atomic.Uint64
	RefusedFull             atomic.Uint64
	FramesRefusedTag        atomic.Uint64
	FramesRefusedSender     atomic.Uint64
	FramesRefusedUnreadable atomic.Uint64
	FramesRefusedOverCap    atomic.Uint64
	FramesRefusedBadMagic   atomic.Uint64

	// The dialling end.
	DialsEndedByAcceptor           atomic.Uint64
	DialsRefusedAcceptorKeyUnknown atomic.Uint64
	DialsRefusedAcceptorProof      atomic.Uint64
	DialsRefusedOwnKeyRevoked      atomic.Uint64
	DialsRefusedAcceptorKeyRevoked atomic.Uint64
	DialsEndedKeyWithdrawn         atomic.Uint64
	DialsRefusedWrongTarget        atomic.Uint64
	DialsRefusedOwnID              atomic.Uint64
	DialsRefusedTimeout            atomic.Uint64
	DialsRefusedNoChallenge        atomic.Uint64
	DialsEndedFrameTag             atomic.Uint64
	DialsEndedFrameSender          atomic.Uint64
	DialsEndedFrameUnreadable      atomic.Uint64
	DialsEndedFrameOverCap         atomic.Uint64
	DialsEndedFrameBadMagic        atomic.Uint64
}

// Metric is one counter as the node registers it.
type Metric = counter.Metric

const prefix = "pace_raft_peer_"

// Metrics lists every counter with its exact Prometheus name, the
// acceptor's first.
func (c *Counters) Metrics() []Metric {
	ms := make([]Metric, len(metrics))
	for i, m := range metrics {
		ms[i] = Metric{Name: prefix + m.name, Help: m.help, Value: m.value(c)}
	}
	return ms
}

// metrics names and explains each counter of pace-consensus §7.3.6.
var metrics = []struct {
	name, help string
	value      func(*Counters) *atomic.Uint64
}{
	{"connections_refused_unknown_key_total", "Consensus connections closed without a verdict: no key is recorded for the id the proof claims.",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedUnknownKey }},
	{"connections_refused_proof_total", "Consensus connections closed without a verdict: the proof did not verify under the key recorded for the id it claims.",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedProof }},
	{"connections_refused_revoked_key_total", "Consensus connections refused with a signed verdict: the dialler's key is revoked.",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedRevokedKey }},
	{"connections_ended_key_withdrawn_total", "Accepted consensus connections closed at a message because a key they proved was revoked or withdrawn.",
		func(c *Counters) *atomic.Uint64 { return &c.EndedKeyWithdrawn }},
	{"connections_refused_wrong_target_total", "Consensus connections refused with a signed verdict: the dialler meant another member (a stale address).",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedWrongTarget }},
	{"connections_refused_own_id_total", "Consensus connections refused with a signed verdict: the dialler proved this member's own id (two machines, one key).",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedOwnID }},
	{"connections_refused_no_handshake_total", "Consensus connections closed because the peer sent something that is not a proof: an old build, or not a consensus client.",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedNoHandshake }},
	{"connections_refused_handshake_timeout_total", "Consensus connections closed because no proof was judged within the handshake bound (5 s).",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedHandshakeTimeout }},
	{"connections_refused_full_total", "Consensus connections closed unread because the listener was full.",
		func(c *Counters) *atomic.Uint64 { return &c.RefusedFull }},
	{"frames_refused_tag_total", "Accepted consensus connections closed at a frame whose tag failed.",
		func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedTag }},
	{"frames_refused_sender_total", "Accepted consensus connections closed at a message naming a sender other than the proven member.",
		func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedSender }},
	{"frames_refused_unreadable_total", "Accepted consensus connections closed at a frame of another version or kind, or a message that could not be read.",
		func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedUnreadable }},
	{"frames_refused_over_cap_total", "Accepted consensus connections closed at a frame declaring more than the size cap.",
		func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedOverCap }},
	{"frames_refused_bad_magic_total", "Accepted consensus connections closed at a frame without the link's magic.",
		func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedBadMagic }},

	{"dials_ended_by_acceptor_total", "Consensus dials the acceptor closed without a verdict: it holds no key for this member, or the proof failed there.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedByAcceptor }},
	{"dials_refused_acceptor_key_unknown_total", "Consensus dials abandoned: this node holds no key for the member whose verdict answered.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorKeyUnknown }},
	{"dials_refused_acceptor_proof_total", "Consensus dials abandoned: the verdict did not verify under the answering member's key.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorProof }},
	{"dials_refused_own_key_revoked_total", "Consensus dials refused by the acceptor's signed verdict: this member's key is revoked.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedOwnKeyRevoked }},
	{"dials_refused_acceptor_key_revoked_total", "Consensus dials abandoned: the answering member signed with a revoked key.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorKeyRevoked }},
	{"dials_ended_key_withdrawn_total", "Dialled consensus connections closed at a message because a key they proved was revoked or withdrawn.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedKeyWithdrawn }},
	{"dials_refused_wrong_target_total", "Consensus dials refused: another member answered at the address (a stale address).",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedWrongTarget }},
	{"dials_refused_own_id_total", "Consensus dials refused: the member that answered holds this member's own id (two machines, one key).",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedOwnID }},
	{"dials_refused_timeout_total", "Consensus dials abandoned: no challenge or no verdict within the handshake bound (5 s).",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedTimeout }},
	{"dials_refused_no_challenge_total", "Consensus dials abandoned: the peer sent no challenge of this version (an old build, or not a consensus port).",
		func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedNoChallenge }},
	{"dials_ended_frame_tag_total", "Dialled consensus connections closed at a frame whose tag failed (two-way learner sessions).",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameTag }},
	{"dials_ended_frame_sender_total", "Dialled consensus connections closed at a message naming a sender other than the proven member.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameSender }},
	{"dials_ended_frame_unreadable_total", "Dialled consensus connections closed at a frame of another version or kind, or a message that could not be read.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameUnreadable }},
	{"dials_ended_frame_over_cap_total", "Dialled consensus connections closed at a frame declaring more than the size cap.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameOverCap }},
	{"dials_ended_frame_bad_magic_total", "Dialled consensus connections closed at a frame without the link's magic.",
		func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameBadMagic }},
}

// outcomes maps each counted error to its counter on each end (nil: that
// end never sees it). Handshake errors come first: they wrap the frame
// error that broke a handshake frame, and the handshake's counter is the
// one that says what happened.
var outcomes = []struct {
	err              error
	reason           string
	acceptor, dialer func(*Counters) *atomic.Uint64
}{
	{ErrNotAProof, "no-handshake", func(c *Counters) *atomic.Uint64 { return &c.RefusedNoHandshake }, nil},
	{ErrHandshakeTimeout, "handshake-timeout", func(c *Counters) *atomic.Uint64 { return &c.RefusedHandshakeTimeout }, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedTimeout }},
	{ErrUnknownKey, "unknown-key", func(c *Counters) *atomic.Uint64 { return &c.RefusedUnknownKey }, nil},
	{ErrBadProof, "proof", func(c *Counters) *atomic.Uint64 { return &c.RefusedProof }, nil},
	{ErrDiallerKeyRevoked, "revoked-key", func(c *Counters) *atomic.Uint64 { return &c.RefusedRevokedKey }, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedOwnKeyRevoked }},
	{ErrWrongTarget, "wrong-target", func(c *Counters) *atomic.Uint64 { return &c.RefusedWrongTarget }, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedWrongTarget }},
	{ErrOwnID, "own-id", func(c *Counters) *atomic.Uint64 { return &c.RefusedOwnID }, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedOwnID }},
	{ErrListenerFull, "full", func(c *Counters) *atomic.Uint64 { return &c.RefusedFull }, nil},
	{ErrNoChallenge, "no-challenge", nil, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedNoChallenge }},
	{ErrEndedByAcceptor, "ended-by-acceptor", nil, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedByAcceptor }},
	{ErrAcceptorKeyUnknown, "acceptor-key-unknown", nil, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorKeyUnknown }},
	{ErrAcceptorProof, "acceptor-proof", nil, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorProof }},
	{ErrAcceptorKeyRevoked, "acceptor-key-revoked", nil, func(c *Counters) *atomic.Uint64 { return &c.DialsRefusedAcceptorKeyRevoked }},
	{ErrKeyWithdrawn, "key-withdrawn", func(c *Counters) *atomic.Uint64 { return &c.EndedKeyWithdrawn }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedKeyWithdrawn }},
	{ErrFrameTag, "frame-tag", func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedTag }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameTag }},
	{ErrFrameSender, "frame-sender", func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedSender }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameSender }},
	{ErrFrameUnreadable, "frame-unreadable", func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedUnreadable }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameUnreadable }},
	{ErrFrameOverCap, "frame-over-cap", func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedOverCap }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameOverCap }},
	{ErrFrameBadMagic, "frame-bad-magic", func(c *Counters) *atomic.Uint64 { return &c.FramesRefusedBadMagic }, func(c *Counters) *atomic.Uint64 { return &c.DialsEndedFrameBadMagic }},
}

// Count increments the counter err maps to on role's end and reports
// whether there was one. Errors no counter follows (nil, ErrNoProof, a
// closed connection, the caller's own mistakes) count nothing. A nil c
// counts nothing.
func (c *Counters) Count(role Role, err error) bool {
	if v := c.counterFor(role, err); v != nil {
		v.Add(1)
		return true
	}
	return false
}

func (c *Counters) counterFor(role Role, err error) *atomic.Uint64 {
	if c == nil || err == nil {
		return nil
	}
	for _, o := range outcomes {
		if !errors.Is(err, o.err) {
			continue
		}
		pick := o.acceptor
		if role == RoleDialler {
			pick = o.dialer
		}
		if pick == nil {
			return nil
		}
		return pick(c)
	}
	return nil
}

// Reason is a short name for what err says happened, for log lines: the
// same on both ends ("wrong-target", "frame-tag"), or "" for an error no
// counter follows.
func Reason(err error) string {
	for _, o := range outcomes {
		if errors.Is(err, o.err) {
			return o.reason
		}
	}
	return ""
}
