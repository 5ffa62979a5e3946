package session_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestPeerTokensAnswer(t *testing.T) {
	tests := []struct {
		name       string
		file       []wire.PeerToken
		challenged []string
		want       []wire.PeerToken
	}{
		{"gradient-protocol §4.2: one token per challenged peer the worker holds, challenge order",
			[]wire.PeerToken{tok("b", "tb"), tok("a", "ta")}, []string{"a", "b"},
			[]wire.PeerToken{tok("a", "ta"), tok("b", "tb")}},
		{"gradient-protocol §4.2: peers without a line are left out",
			[]wire.PeerToken{tok("a", "ta")}, []string{"a", "b"},
			[]wire.PeerToken{tok("a", "ta")}},
		{"gradient-protocol §4.2: a single * line answers every challenged peer with the same token",
			[]wire.PeerToken{tok("*", "w")}, []string{"a", "team-1"},
			[]wire.PeerToken{tok("a", "w"), tok("team-1", "w")}},
		{"gradient-protocol §4.2: a peer's own line wins over the * line, wherever it stands",
			[]wire.PeerToken{tok("*", "w"), tok("a", "ta")}, []string{"a", "b"},
			[]wire.PeerToken{tok("a", "ta"), tok("b", "w")}},
		{"gradient-protocol §4.4 step 5 mirrored: for a peer listed twice the first pair wins (also for *)",
			[]wire.PeerToken{tok("a", "first"), tok("a", "second"), tok("*", "w1"), tok("*", "w2")}, []string{"a", "b"},
			[]wire.PeerToken{tok("a", "first"), tok("b", "w1")}},
		{"gradient-protocol §4.1: a peer challenged twice is answered once",
			[]wire.PeerToken{tok("a", "ta")}, []string{"a", "a"},
			[]wire.PeerToken{tok("a", "ta")}},
		{"gradient-server §10.8: an empty challenge is answered with no tokens",
			[]wire.PeerToken{tok("*", "w")}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := session.NewPeerTokens(tc.file).Answer(tc.challenged)
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("answer (-want +got):\n%s", d)
			}
		})
	}
	if n := session.NewPeerTokens([]wire.PeerToken{tok("a", "1"), tok("a", "2"), tok("*", "w")}).Len(); n != 2 {
		t.Fatalf("Len = %d, want 2 (one peer line, one * line)", n)
	}
}
