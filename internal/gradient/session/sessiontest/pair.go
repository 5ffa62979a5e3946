package sessiontest

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// ErrNoProgress: the pair kept exchanging messages past the step limit.
var ErrNoProgress = errors.New("sessiontest: pair did not settle")

// maxDeliveries bounds one Run; a handshake plus a few reauth rounds need a dozen.
const maxDeliveries = 1000

// Answerer answers a role's Needs, like a driver would; nil for a role that never has one.
type Answerer func(session.Need) session.Event

// Side is one role of a Pair with what it reported.
type Side[S session.Role[S]] struct {
	Role    S
	Answer  Answerer
	Reports []session.Output // every output whose Status is not Continue, in order
	inbox   []wire.Message
}

// Frame is one message that crossed the in-memory link.
type Frame struct {
	From string // "A" or "B"
	Msg  wire.Message
}

// Pair runs two roles against each other as two socket drivers would: each output's messages
// are encoded with the wire codec, decoded on the other side and stepped in order, and each
// Need is answered before the next message. Messages to a side that ended are dropped, as a
// closed socket would.
type Pair[A session.Role[A], B session.Role[B]] struct {
	A          *Side[A]
	B          *Side[B]
	Version    uint16  // agreed protocol version; the newest supported by default
	Transcript []Frame // every message delivered or dropped, in send order
}

// NewPair wires two freshly started roles together and queues their opening messages.
func NewPair[A session.Role[A], B session.Role[B]](a A, aOut session.Output, answerA Answerer,
	b B, bOut session.Output, answerB Answerer) (*Pair[A, B], error) {
	p := &Pair[A, B]{
		A:       &Side[A]{Role: a, Answer: answerA},
		B:       &Side[B]{Role: b, Answer: answerB},
		Version: wire.ProtoVersions().Newest,
	}
	if err := applyOutput(p, p.A, p.B, "A", aOut); err != nil {
		return nil, err
	}
	if err := applyOutput(p, p.B, p.A, "B", bOut); err != nil {
		return nil, err
	}
	return p, nil
}

// Run delivers messages, alternating sides, until none is in flight.
func (p *Pair[A, B]) Run() error {
	for range maxDeliveries {
		if len(p.A.inbox) == 0 && len(p.B.inbox) == 0 {
			return nil
		}
		if err := deliver(p, p.A, p.B, "A"); err != nil {
			return err
		}
		if err := deliver(p, p.B, p.A, "B"); err != nil {
			return err
		}
	}
	return ErrNoProgress
}

// StepA steps side A with a trigger (ServerReauth, PeersChanged) and runs the pair.
func (p *Pair[A, B]) StepA(ev session.Event) error { return stepSide(p, p.A, p.B, "A", ev) }

// StepB steps side B with a trigger and runs the pair.
func (p *Pair[A, B]) StepB(ev session.Event) error { return stepSide(p, p.B, p.A, "B", ev) }

func stepSide[A session.Role[A], B session.Role[B], S session.Role[S], O session.Role[O]](
	p *Pair[A, B], s *Side[S], other *Side[O], name string, ev session.Event) error {
	var out session.Output
	s.Role, out = s.Role.Step(ev)
	if err := applyOutput(p, s, other, name, out); err != nil {
		return err
	}
	return p.Run()
}

func deliver[A session.Role[A], B session.Role[B], S session.Role[S], O session.Role[O]](
	p *Pair[A, B], s *Side[S], other *Side[O], name string) error {
	if len(s.inbox) == 0 {
		return nil
	}
	m := s.inbox[0]
	s.inbox = s.inbox[1:]
	var out session.Output
	s.Role, out = s.Role.Step(session.Received{Msg: m})
	return applyOutput(p, s, other, name, out)
}

// applyOutput sends an output's messages to the other side through the codec and answers its
// Needs until the role waits for a message again.
func applyOutput[A session.Role[A], B session.Role[B], S session.Role[S], O session.Role[O]](
	p *Pair[A, B], s *Side[S], other *Side[O], name string, out session.Output) error {
	for {
		if out.Status != session.Continue {
			s.Reports = append(s.Reports, out)
		}
		for _, m := range out.Send {
			wireMsg, err := roundTrip(m, p.Version)
			if err != nil {
				return fmt.Errorf("side %s sent %T: %w", name, m, err)
			}
			p.Transcript = append(p.Transcript, Frame{From: name, Msg: wireMsg})
			if _, done := other.Role.Done(); !done {
				other.inbox = append(other.inbox, wireMsg)
			}
		}
		if out.Need == nil {
			return nil
		}
		if s.Answer == nil {
			return fmt.Errorf("side %s needs %T and has no answerer", name, out.Need)
		}
		s.Role, out = s.Role.Step(s.Answer(out.Need))
	}
}

// roundTrip encodes m and decodes it as the other side would, so only real wire messages
// cross the link.
func roundTrip(m wire.Message, v uint16) (wire.Message, error) {
	frame, err := wire.Encode(m, v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if _, ok := m.(wire.ClientMessage); ok {
		return wire.DecodeClientMessage(frame, v)
	}
	return wire.DecodeServerMessage(frame, v)
}

// Status is the last reported status of a side, Continue if it reported nothing.
func (s *Side[S]) Status() session.Status {
	if len(s.Reports) == 0 {
		return session.Continue
	}
	return s.Reports[len(s.Reports)-1].Status
}
