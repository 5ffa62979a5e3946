package peerlink

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func header(magic string, version, kind byte, n uint32) []byte {
	b := append([]byte(magic), version, kind)
	return binary.BigEndian.AppendUint32(b, n)
}

// Every header is judged before its payload is read, each refusal under
// the name the counters give it.
func TestParseHeader(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		max  uint32
		want Header
		err  error
	}{
		{"message", header(Magic, Version, 4, 10), 0, Header{KindMessage, 10}, nil},
		{"message at the default cap", header(Magic, Version, 4, DefaultMaxMessage), 0, Header{KindMessage, DefaultMaxMessage}, nil},
		{"message over the default cap", header(Magic, Version, 4, DefaultMaxMessage+1), 0, Header{}, ErrFrameOverCap},
		{"message over a set cap", header(Magic, Version, 4, 1025), 1024, Header{}, ErrFrameOverCap},
		{"proof", header(Magic, Version, 2, MaxHandshakePayload), 0, Header{KindProof, MaxHandshakePayload}, nil},
		{"proof over its cap", header(Magic, Version, 2, MaxHandshakePayload+1), 0, Header{}, ErrFrameOverCap},
		{"challenge over its cap whatever the message cap", header(Magic, Version, 1, 1<<20), 1 << 30, Header{}, ErrFrameOverCap},
		{"version 4", header(Magic, 4, 4, 10), 0, Header{}, ErrFrameUnreadable},
		{"unknown kind", header(Magic, Version, 9, 10), 0, Header{}, ErrFrameUnreadable},
		{"kind 0", header(Magic, Version, 0, 0), 0, Header{}, ErrFrameUnreadable},
		{"an HTTP request", []byte("GET / HTTP/1.1\r\n"), 0, Header{}, ErrFrameBadMagic},
		{"a 0xFC frame", []byte{0xFC, 1, 0, 1, 0, 0, 0, 0, 0, 0}, 0, Header{}, ErrFrameBadMagic},
		{"short", []byte("PRFT\x05"), 0, Header{}, ErrFrameUnreadable},
		{"short and not this wire", []byte("GE"), 0, Header{}, ErrFrameBadMagic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader(tt.b, tt.max)
			if !sameErr(err, tt.err) || h != tt.want {
				t.Fatalf("got %+v, %v", h, err)
			}
		})
	}
}

// A message over the link's cap is refused by the sender before anything
// is sent (the caller's mistake: the link stays up), and by the receiver at
// its header.
func TestMessageCap(t *testing.T) {
	r := newRoster()
	a, d := member("v1", v1Key, r, 1), member("l1", l1Key, r, 2)
	a.MaxMessage, d.MaxMessage = 8, 8
	l := accepted(t, a, d, LearnerToVoter)
	if _, err := l.dialler.Seal(make([]byte, 9)); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("Seal over the cap: %v", err)
	}
	if _, err := receive(l.acceptor, send(t, l.dialler, make([]byte, 8))); err != nil {
		t.Fatalf("at the cap, after a refused Seal: %v", err)
	}
	_, err := l.acceptor.ReadHeader(header(Magic, Version, 4, 9))
	if !errors.Is(err, ErrFrameOverCap) || !cmp.Equal(counted(RoleAcceptor, err), want("frames_refused_over_cap_total")) {
		t.Fatalf("header over the cap: %v", err)
	}
}

// On a proven link only message frames belong; a handshake frame, bad
// magic and another version each end it under their own counter.
func TestProvenLinkRefusesOtherFrames(t *testing.T) {
	l, _ := pairOf(t)
	for _, tt := range []struct {
		b         []byte
		err       error
		acc, dial string
	}{
		{header(Magic, Version, 3, 10), ErrFrameUnreadable, "frames_refused_unreadable_total", "dials_ended_frame_unreadable_total"},
		{header(Magic, 6, 4, 10), ErrFrameUnreadable, "frames_refused_unreadable_total", "dials_ended_frame_unreadable_total"},
		{header("HTTP", Version, 4, 10), ErrFrameBadMagic, "frames_refused_bad_magic_total", "dials_ended_frame_bad_magic_total"},
		{header(Magic, Version, 4, 1<<31), ErrFrameOverCap, "frames_refused_over_cap_total", "dials_ended_frame_over_cap_total"},
	} {
		_, errA := l.acceptor.ReadHeader(tt.b)
		_, errD := l.dialler.ReadHeader(tt.b)
		if !errors.Is(errA, tt.err) || !errors.Is(errD, tt.err) {
			t.Fatalf("%q: %v %v", tt.b, errA, errD)
		}
		if !cmp.Equal(counted(RoleAcceptor, errA), want(tt.acc)) || !cmp.Equal(counted(RoleDialler, errD), want(tt.dial)) {
			t.Fatalf("%q: counted %v %v", tt.b, counted(RoleAcceptor, errA), counted(RoleDialler, errD))
		}
	}
}

// A handshake frame of the wrong kind, or whose length disagrees with its
// bytes, is not that handshake message.
func TestHandshakeFramesAreExact(t *testing.T) {
	p := pristine(t)
	r := newRoster()
	dh, _ := member("l1", l1Key, r, 2).Dial("v1", LearnerToVoter)
	if _, err := dh.Prove(p.proof); !errors.Is(err, ErrNoChallenge) {
		t.Fatalf("a proof as challenge: %v", err)
	}
	ah, _ := member("v1", v1Key, r, 1).Accept()
	if _, err := ah.Judge(append(p.proof, 0)); !errors.Is(err, ErrNotAProof) {
		t.Fatalf("a proof with a trailing byte: %v", err)
	}
	ah, _ = member("v1", v1Key, r, 1).Accept()
	if _, err := ah.Judge(p.challenge); !errors.Is(err, ErrNotAProof) {
		t.Fatalf("a challenge as proof: %v", err)
	}
}
