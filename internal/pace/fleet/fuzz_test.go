package fleet

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeCommand: any bytes either decode to a command that re-encodes
// to exactly those bytes, or are refused as ErrMalformed; a decoded command
// validates and applies against real states without panicking, and an
// accepted one leaves a state whose snapshot restores.
func FuzzDecodeCommand(f *testing.F) {
	for _, c := range sampleCommands() {
		f.Add(EncodeCommand(nil, c))
	}
	states := []*State{New(), fixture(f)}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("refusal %v is not ErrMalformed", err)
			}
			return
		}
		if !bytes.Equal(EncodeCommand(nil, c), b) {
			t.Fatalf("%#v re-encodes differently", c)
		}
		for _, s := range states {
			next, err := Apply(s, c)
			if err != nil {
				if !errors.Is(err, ErrInvalidChange) && !errors.Is(err, ErrNotNeeded) {
					t.Fatalf("refusal %v wraps neither sentinel", err)
				}
				continue
			}
			Membership(s, c)
			if restored, err := DecodeSnapshot(EncodeSnapshot(next)); err != nil || !restored.Equal(next) {
				t.Fatalf("state after %#v does not restore: %v", c, err)
			}
		}
	})
}

// FuzzDecodeSnapshot: any bytes either decode to a state whose canonical
// encoding is exactly those bytes, or are refused as ErrMalformed; a decoded
// state answers the roster view consistently with its member list.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(EncodeSnapshot(New()))
	f.Add(EncodeSnapshot(fixture(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("refusal %v is not ErrMalformed", err)
			}
			return
		}
		if !bytes.Equal(EncodeSnapshot(s), b) {
			t.Fatal("decoded snapshot re-encodes differently")
		}
		if s.Founded() != s.HasVoters() {
			t.Fatal("founded state without a voter, or voters without a cluster")
		}
		for _, m := range s.Members() {
			k, ok := s.MemberKey(m.ID)
			_, voter := s.VoterKey(m.ID)
			byRaft, _ := s.MemberByRaftID(m.RaftID())
			if !ok || !bytes.Equal(k, m.Key) || voter != (m.Seat == Voter) || s.Revoked(m.Key) || byRaft.ID != m.ID {
				t.Fatalf("roster view disagrees with member %+v", m)
			}
		}
		for _, r := range s.Revocations() {
			if !s.Revoked(r.Key) {
				t.Fatalf("revocation %+v not answered", r)
			}
		}
	})
}
