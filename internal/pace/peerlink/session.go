package peerlink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/buildfleet/buildfleet/internal/pace/nodeproof"
)

// Session is one proven link: who is at the other end, which way messages
// may go, and the per-direction keys. Seal (the writer's) and ReadHeader
// with Open (the reader's) may run in two goroutines at once; each side is
// used by one goroutine at a time. A Seal or Open that fails with anything
// but ErrOneWay or ErrMessageTooLarge leaves that side out of step: the
// link must be closed.
type Session struct {
	member     *Member
	role       Role
	self, peer Peer
	dir        Direction
	sealer     *nodeproof.Sealer
}

// Peer is the member at the other end, as proven.
func (s *Session) Peer() Peer { return s.peer }

// Self is this member, as it proved itself (or was proven to).
func (s *Session) Self() Peer { return s.self }

// Role is this end's.
func (s *Session) Role() Role { return s.role }

// Direction is the session the dialler asked for.
func (s *Session) Direction() Direction { return s.dir }

// MaxMessage is the cap on a message either way.
func (s *Session) MaxMessage() uint32 { return s.member.maxMessage() }

// CanSend reports whether this end may send messages: the dialler always,
// the acceptor on a two-way link only.
func (s *Session) CanSend() bool { return s.role == RoleDialler || s.dir.TwoWay() }

// Standing asks the roster again whether both keys the link proved still
// stand: the peer's must still be recorded for its id and not revoked, and
// this member's own must not be revoked or replaced. ErrKeyWithdrawn
// otherwise. Seal and Open call it for every message; a caller may also
// call it when a new state is applied, to end an idle link at once.
func (s *Session) Standing() error {
	r := s.member.Roster
	key, revoked, ok := r.Key(s.peer.ID)
	switch {
	case !ok:
		return fmt.Errorf("%w: member %q is no longer recorded", ErrKeyWithdrawn, s.peer.ID)
	case revoked || !bytes.Equal(key, s.peer.Key):
		return fmt.Errorf("%w: member %q's key is revoked or replaced", ErrKeyWithdrawn, s.peer.ID)
	}
	// This member's own record, when there is one: a node whose roster
	// does not list it yet (still joining) is judged by its peer alone.
	if key, revoked, ok := r.Key(s.self.ID); ok && (revoked || !bytes.Equal(key, s.self.Key)) {
		return fmt.Errorf("%w: this member's (%q) key is revoked or replaced", ErrKeyWithdrawn, s.self.ID)
	}
	return nil
}

// Seal frames one message to send: the header and tag to write around it
// (the payload is msg itself, not copied). The roster is asked first.
func (s *Session) Seal(msg []byte) (Frame, error) {
	switch {
	case !s.CanSend():
		return Frame{}, ErrOneWay
	case uint64(len(msg)) > uint64(s.MaxMessage()):
		return Frame{}, fmt.Errorf("%w: %d bytes, at most %d", ErrMessageTooLarge, len(msg), s.MaxMessage())
	}
	if err := s.Standing(); err != nil {
		return Frame{}, err
	}
	header := AppendHeader(make([]byte, 0, HeaderLen), KindMessage, uint32(len(msg)))
	tag := s.sealer.AppendTag(make([]byte, 0, TagLen), header, msg)
	return Frame{Header: header, Payload: msg, Tag: tag}, nil
}

// ReadHeader judges a received frame header before its payload is read:
// the payload length to read (the tag follows it), or why the link ends.
func (s *Session) ReadHeader(header []byte) (int, error) {
	h, err := ParseHeader(header, s.MaxMessage())
	switch {
	case err != nil:
		return 0, err
	case h.Kind != KindMessage:
		return 0, fmt.Errorf("%w: a kind %d frame on a proven link", ErrFrameUnreadable, h.Kind)
	case !s.peerCanSend():
		return 0, fmt.Errorf("%w: a voter-to-voter link carries nothing to its dialler", ErrFrameUnreadable)
	}
	return int(h.Len), nil
}

func (s *Session) peerCanSend() bool { return s.role == RoleAcceptor || s.dir.TwoWay() }

// Open checks one received message frame, in this order: its tag (a frame
// the peer did not send in this place fails here), the roster, then the
// SenderCheck. The header must have passed ReadHeader.
func (s *Session) Open(f Frame) error {
	if err := s.sealer.CheckTag(f.Tag, f.Header, f.Payload); err != nil {
		return fmt.Errorf("%w: from member %q", ErrFrameTag, s.peer.ID)
	}
	if err := s.Standing(); err != nil {
		return err
	}
	check := s.member.CheckSender
	if check == nil {
		return nil
	}
	err := check(s.peer.ID, f.Payload)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFrameUnreadable):
		return fmt.Errorf("from member %q: %w", s.peer.ID, err)
	}
	return fmt.Errorf("%w: on member %q's link: %w", ErrFrameSender, s.peer.ID, err)
}

// String names the two ends and nothing secret.
func (s *Session) String() string {
	return fmt.Sprintf("consensus link %s %q ↔ %q (%v)", s.role, s.self.ID, s.peer.ID, s.dir)
}

// LogValue logs what String shows: never key material.
func (s *Session) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Format shows String whatever the verb, %#v and %x included.
func (s *Session) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }
