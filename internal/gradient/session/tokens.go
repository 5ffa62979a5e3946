package session

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// WildcardPeer is the peers-file peer ID that answers every challenged peer
// (gradient-protocol §4.2).
const WildcardPeer = "*"

// PeerTokens is a worker's peers file as a map: the token it holds for each peer, and the
// optional `*` line that answers any peer without a line of its own. Reading and parsing the
// file is the worker's; this is the pure part the Peer role answers challenges from. Secret:
// String, GoString and LogValue print peer IDs only.
type PeerTokens struct {
	byPeer   map[string]string
	wildcard string
	hasWild  bool
}

// NewPeerTokens builds the map from peers-file pairs in file order; for a peer ID listed
// twice the first pair wins, as on the server (gradient-protocol §4.4 step 5).
func NewPeerTokens(pairs []wire.PeerToken) PeerTokens {
	t := PeerTokens{byPeer: make(map[string]string, len(pairs))}
	for _, p := range pairs {
		if p.PeerID == WildcardPeer {
			if !t.hasWild {
				t.wildcard, t.hasWild = p.Token, true
			}
			continue
		}
		if _, dup := t.byPeer[p.PeerID]; !dup {
			t.byPeer[p.PeerID] = p.Token
		}
	}
	return t
}

// Answer is the AuthResponse token list for a challenge: one pair per challenged peer the
// worker holds a token for, its own line first, else the `*` line; peers without either are
// left out. A peer challenged twice is answered once.
func (t PeerTokens) Answer(challenged []string) []wire.PeerToken {
	seen := make(map[string]bool, len(challenged))
	var out []wire.PeerToken
	for _, peer := range challenged {
		if seen[peer] {
			continue
		}
		seen[peer] = true
		if tok, ok := t.byPeer[peer]; ok {
			out = append(out, wire.PeerToken{PeerID: peer, Token: tok})
		} else if t.hasWild {
			out = append(out, wire.PeerToken{PeerID: peer, Token: t.wildcard})
		}
	}
	return out
}

// Len counts the peers with a line of their own, plus one for a `*` line.
func (t PeerTokens) Len() int {
	n := len(t.byPeer)
	if t.hasWild {
		n++
	}
	return n
}

// String lists the peer IDs, never the tokens.
func (t PeerTokens) String() string {
	ids := make([]string, 0, t.Len())
	for id := range t.byPeer {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if t.hasWild {
		ids = append(ids, WildcardPeer)
	}
	return fmt.Sprintf("PeerTokens%v", ids)
}

// GoString keeps %#v from printing the tokens.
func (t PeerTokens) GoString() string { return t.String() }

// LogValue keeps the tokens out of structured logs.
func (t PeerTokens) LogValue() slog.Value { return slog.StringValue(t.String()) }
