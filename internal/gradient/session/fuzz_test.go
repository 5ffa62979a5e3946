package session_test

import (
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// FuzzRoles drives one role (picked by the first byte) with a byte script: frames decoded by
// the real codec from the fuzzer's bytes, answers to pending needs, triggers and unasked
// answers. Whatever the bytes, a role must not panic, must send only messages that encode,
// must stay ended once ended, and may fault only when the script broke the driver contract.
// Seeds in testdata/fuzz/FuzzRoles are the happy handshakes of each role.
func FuzzRoles(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		s := &script{data: data[1:]}
		switch data[0] % 4 {
		case 0:
			fuzzRole(t, s, asStart(session.NewAuthority(session.AuthorityConfig{AcceptInbound: true})), true)
		case 1:
			fuzzRole(t, s, asStart(session.NewDialer(dialerCfg)), true)
		case 2:
			fuzzRole(t, s, asStart(session.NewPeer(peerCfg)), false)
		case 3:
			fuzzRole(t, s, asStart(session.NewDialed(dialedCfg)), false)
		}
	})
}

type started[S any] struct {
	role S
	out  session.Output
}

func asStart[S any](role S, out session.Output) started[S] { return started[S]{role, out} }

func decodeClient(b []byte) (wire.Message, error) { return wire.DecodeClientMessage(b, v30) }
func decodeServer(b []byte) (wire.Message, error) { return wire.DecodeServerMessage(b, v30) }

func fuzzRole[S session.Role[S]](t *testing.T, s *script, st started[S], server bool) {
	decode := decodeServer
	if server {
		decode = decodeClient
	}
	role, pending := st.role, st.out.Need
	for !s.done() {
		ev, ok := s.event(pending, decode)
		if !ok {
			continue
		}
		prev, wasEnded := role.Done()
		next, out := role.Step(ev)
		for _, m := range out.Send {
			if _, err := wire.Encode(m, v30); err != nil {
				t.Fatalf("sent %T that does not encode: %v", m, err)
			}
		}
		_, serverTrigger := ev.(session.ServerReauth)
		_, workerTrigger := ev.(session.PeersChanged)
		foreign := (server && workerTrigger) || (!server && serverTrigger)
		wantFault := !wasEnded && (!answers(pending, ev) || foreign)
		if gotFault := !wasEnded && out.End.Kind == session.EndFault; gotFault != wantFault {
			t.Fatalf("%T with pending %T: fault=%v (%v), want %v", ev, pending, gotFault, out.End.Err, wantFault)
		}
		if wantFault && !errors.Is(out.End.Err, session.ErrOutOfTurn) && !errors.Is(out.End.Err, session.ErrNotForRole) {
			t.Fatalf("fault without a sentinel: %v", out.End.Err)
		}
		if wasEnded && (len(out.Send) > 0 || out.End.Kind != prev.Kind || out.End.Code != prev.Code) {
			t.Fatalf("an ended role changed: %v → %v", prev, out.End)
		}
		role, pending = next, out.Need
	}
}

// script reads a fuzzer's bytes as events: an op byte, then its operand.
type script struct {
	data []byte
}

func (s *script) done() bool { return len(s.data) == 0 }

func (s *script) byte() byte {
	if len(s.data) == 0 {
		return 0
	}
	b := s.data[0]
	s.data = s.data[1:]
	return b
}

// event decodes the next event: ops 0–4 a frame of the next byte's length, 5 a trigger, 6 the
// answer to the pending need (or an unasked one), 7 an answer of another kind.
func (s *script) event(pending session.Need, decode func([]byte) (wire.Message, error)) (session.Event, bool) {
	switch op := s.byte() % 8; op {
	case 5:
		if s.byte()%2 == 0 {
			return session.ServerReauth{}, true
		}
		return session.PeersChanged{Tokens: peersFile}, true
	case 6, 7:
		return fuzzAnswer(pending, s.byte(), op == 7), true
	}
	n := int(s.byte())
	n = min(n, len(s.data))
	frame := s.data[:n]
	s.data = s.data[n:]
	m, err := decode(frame)
	return session.Received{Msg: m}, err == nil
}

// fuzzAnswer answers pending from one byte of choices; wrong picks the next kind instead.
func fuzzAnswer(pending session.Need, b byte, wrong bool) session.Event {
	kinds := []session.Event{
		session.FactsAnswer{Facts: [...]session.WorkerFacts{twoProjs, {}, {Registrations: []session.Registration{inactive(projA)}},
			{Registrations: []session.Registration{noCache(projA)}}}[b%4]},
		session.TokensAnswer{Valid: [...][]string{{"proj-a", "proj-b"}, nil, {"proj-a"}, {"team-1"}}[b%4]},
		session.ClaimAnswer{Claimed: b%5 != 0},
	}
	i := 0
	switch pending.(type) {
	case session.VerifyTokens:
		i = 1
	case session.ClaimSession:
		i = 2
	case nil:
		i = int(b) % 3
	}
	if wrong {
		i = (i + 1) % 3
	}
	return kinds[i]
}
