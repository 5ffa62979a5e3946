package session_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// TestPropertyArbitrarySequences feeds every role arbitrary sequences of real wire messages
// (every variant of its inbound direction), answers (right, wrong and unasked), triggers and
// driver mistakes, and checks after every step: no panic; the step is a pure function of
// (value, event); the output is well formed and encodable; a fault happens exactly when the
// driver broke the contract; the handshake consumes a bounded number of messages; grants never
// shrink once running. At the end, a role that has not ended still reaches an end: its pending
// needs are answerable and the other side's Reject ends it (gradient-server §10.3: Reject in
// any state).
func TestPropertyArbitrarySequences(t *testing.T) {
	t.Run("authority", func(t *testing.T) { rapid.Check(t, checkRole(authorityHarness())) })
	t.Run("dialer", func(t *testing.T) { rapid.Check(t, checkRole(dialerHarness())) })
	t.Run("peer", func(t *testing.T) { rapid.Check(t, checkRole(peerHarness())) })
	t.Run("dialed", func(t *testing.T) { rapid.Check(t, checkRole(dialedHarness())) })
}

func checkRole[S session.Role[S]](h harness[S]) func(*rapid.T) {
	return func(t *rapid.T) {
		role, out := h.start(t)
		checkSends(t, h, out)
		obs := &observer{pending: out.Need}
		if n := len(out.Send); n > 0 {
			obs.lastSent = out.Send[n-1]
		}
		careless := rapid.Bool().Draw(t, "careless driver")
		for range rapid.IntRange(0, 60).Draw(t, "steps") {
			ev := drawEvent(t, h, obs, careless)
			next, got := role.Step(ev)
			if _, again := role.Step(ev); !cmp.Equal(got, again, sameOutput...) {
				t.Fatalf("Step is not a pure function of (value, event): %v", cmp.Diff(got, again, sameOutput...))
			}
			observe(t, obs, h, role, ev, next, got)
			role = next
		}
		reachesEnd(t, h, role, obs.pending)
	}
}

// sameOutput compares two outputs of the same step: errors by text, since each fault wraps a
// fresh error value.
var sameOutput = []cmp.Option{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
})}

// observer carries what the checks need across steps.
type observer struct {
	lastSent   wire.Message // the role's last message, for cooperative replies
	pending    session.Need
	consumed   int // messages consumed while handshaking
	authorized []string
}

func observe[S session.Role[S]](t *rapid.T, o *observer, h harness[S], before S, ev session.Event, after S, out session.Output) {
	_, wasEnded := before.Done()
	wantFault := !wasEnded && violation(h, o.pending, ev)
	if gotFault := !wasEnded && out.End.Kind == session.EndFault; gotFault != wantFault {
		t.Fatalf("event %T with pending %T: fault %v (%v), want %v", ev, o.pending, gotFault, out.End.Err, wantFault)
	}
	if wantFault && !errors.Is(out.End.Err, session.ErrOutOfTurn) && !errors.Is(out.End.Err, session.ErrNotForRole) {
		t.Fatalf("fault without a sentinel: %v", out.End.Err)
	}
	checkSends(t, h, out)
	checkStatus(t, before, ev, after, out)
	if _, isMsg := ev.(session.Received); isMsg && !wantFault && !wasEnded && !before.Running() {
		o.consumed++
	}
	if _, ended := after.Done(); !ended && !after.Running() && o.consumed > h.handshakeMsgs {
		t.Fatalf("still handshaking after %d messages", o.consumed)
	}
	checkGrowth(t, o, after, out)
	o.pending = out.Need
	if n := len(out.Send); n > 0 {
		o.lastSent = out.Send[n-1]
	}
}

// violation reports whether ev breaks the stepping contract for this role.
func violation[S session.Role[S]](h harness[S], pending session.Need, ev session.Event) bool {
	if !answers(pending, ev) {
		return true
	}
	switch ev := ev.(type) {
	case session.Received:
		return ev.Msg == nil || h.outbound(ev.Msg) // a message travelling our own way
	case session.ServerReauth, session.PeersChanged:
		return slices.ContainsFunc(h.foreign, func(f session.Event) bool { return sameKind(f, ev) })
	}
	return false
}

// answers reports whether ev is what the pending need allows: its answer, or with no need
// anything but an answer.
func answers(pending session.Need, ev session.Event) bool {
	switch pending.(type) {
	case session.LookupWorker:
		_, ok := ev.(session.FactsAnswer)
		return ok
	case session.VerifyTokens:
		_, ok := ev.(session.TokensAnswer)
		return ok
	case session.ClaimSession:
		_, ok := ev.(session.ClaimAnswer)
		return ok
	}
	switch ev.(type) {
	case session.FactsAnswer, session.TokensAnswer, session.ClaimAnswer:
		return false
	}
	return true
}

func sameKind(a, b session.Event) bool {
	_, aServer := a.(session.ServerReauth)
	_, bServer := b.(session.ServerReauth)
	return aServer == bServer
}

// checkSends: every message goes the role's way and is a real wire message at v30.
func checkSends[S session.Role[S]](t *rapid.T, h harness[S], out session.Output) {
	for _, m := range out.Send {
		if m == nil || !h.outbound(m) {
			t.Fatalf("role sent %T, not its direction", m)
		}
		if _, err := wire.Encode(m, v30); err != nil {
			t.Fatalf("role sent %T that does not encode: %v", m, err)
		}
	}
}

func checkStatus[S session.Role[S]](t *rapid.T, before S, ev session.Event, after S, out session.Output) {
	_, ended := after.Done()
	if (out.Status == session.Ended) != ended {
		t.Fatalf("status %v but Done() = %v", out.Status, ended)
	}
	switch out.Status {
	case session.Ended:
		checkEnd(t, before, out)
	case session.Running, session.Reauthorized:
		if !after.Running() || !cmp.Equal(out.Result, after.Result(), outputCmp...) {
			t.Fatalf("status %v but Running() = %v, result %+v vs %+v", out.Status, after.Running(), out.Result, after.Result())
		}
	case session.Pass:
		if _, ok := ev.(session.Received); !ok || !before.Running() || len(out.Send) > 0 || out.Need != nil {
			t.Fatalf("Pass for %T (running %v) with %d sends, need %v", ev, before.Running(), len(out.Send), out.Need)
		}
	}
}

func checkEnd[S session.Role[S]](t *rapid.T, before S, out session.Output) {
	e := out.End
	if out.Need != nil || e.Kind == 0 {
		t.Fatalf("ended with need %v, kind %v", out.Need, e.Kind)
	}
	if prev, was := before.Done(); was {
		if len(out.Send) > 0 || !cmp.Equal(prev, e, sameOutput...) {
			t.Fatalf("an ended role changed its end or sent %d messages", len(out.Send))
		}
		return
	}
	if e.Kind == session.EndViolation {
		if len(out.Send) != 1 {
			t.Fatalf("Violation sent %d messages, want the Error alone", len(out.Send))
		}
		if se, ok := out.Send[0].(*wire.ServerError); !ok || se.Code != 400 || se.Message != e.Reason {
			t.Fatalf("Violation %d %q but sent %v", e.Code, e.Reason, out.Send)
		}
		return
	}
	if e.Kind != session.EndRejectSent {
		if len(out.Send) > 0 {
			t.Fatalf("%v end sent %d messages", e.Kind, len(out.Send))
		}
		return
	}
	if !slices.Contains([]uint16{400, 401, 403, 495, 496}, e.Code) || e.Reason == "" {
		t.Fatalf("rejection %d %q is not one of gradient-protocol §4.5", e.Code, e.Reason)
	}
	code, reason := rejectOf(out.Send[len(out.Send)-1])
	if len(out.Send) != 1 || code != e.Code || reason != e.Reason {
		t.Fatalf("RejectSent %d %q but sent %v", e.Code, e.Reason, out.Send)
	}
}

func rejectOf(m wire.Message) (uint16, string) {
	switch m := m.(type) {
	case *wire.ServerReject:
		return m.Code, m.Reason
	case *wire.ClientReject:
		return m.Code, m.Reason
	}
	return 0, ""
}

// checkGrowth: once running, the authorized set only grows (gradient-protocol §4.3), and no
// authorized peer is reported as failed.
func checkGrowth[S session.Role[S]](t *rapid.T, o *observer, after S, out session.Output) {
	if !after.Running() {
		return
	}
	r := after.Result()
	for _, id := range o.authorized {
		if !slices.Contains(r.Authorized, id) {
			t.Fatalf("grant %q lost: was %v, now %v", id, o.authorized, r.Authorized)
		}
	}
	if out.Status == session.Reauthorized {
		for _, f := range r.Failed {
			if slices.Contains(r.Authorized, f.PeerID) {
				t.Fatalf("%q both authorized and failed", f.PeerID)
			}
		}
	}
	o.authorized = r.Authorized
}

// reachesEnd shows a role that has not ended can still end: its pending needs take their
// answers without a fault, and the other side's Reject then ends it.
func reachesEnd[S session.Role[S]](t *rapid.T, h harness[S], role S, pending session.Need) {
	if _, ended := role.Done(); ended {
		return
	}
	for range 5 {
		if pending == nil {
			break
		}
		var out session.Output
		if role, out = role.Step(drawAnswer(t, pending)); out.End.Kind == session.EndFault {
			t.Fatalf("answering %T faulted: %v", pending, out.End.Err)
		}
		pending = out.Need
	}
	if _, ended := role.Done(); ended {
		return
	}
	if pending != nil {
		t.Fatalf("needs keep coming: %T", pending)
	}
	_, out := role.Step(session.Received{Msg: h.reject})
	if out.Status != session.Ended || out.End.Kind != session.EndRejectReceived {
		t.Fatalf("the other side's Reject did not end the role: %v %v", out.Status, out.End)
	}
}
