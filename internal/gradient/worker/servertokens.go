package worker

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// ErrBadServerTokensFile: a line of the accepted server tokens file is not `peer_id:hash`
// with a hash Verify can use. The error names the line number, never its content.
var ErrBadServerTokensFile = errors.New("worker: bad accepted server tokens file")

// maxAuthenticateTokens bounds how many tokens of one Authenticate are looked at; a server
// holds one per registration at the worker's URL, so more is refused before any hashing.
const maxAuthenticateTokens = 256

// ServerTokens is the accepted server tokens file (gradient-protocol §4.1 as_dialed): for
// each peer ID the hashes a server's token for that peer may match, plus `*` lines that match
// for any peer. The zero value accepts nothing; OpenServerTokens accepts every server.
type ServerTokens struct {
	byPeer   map[string][]string
	wildcard []string
	open     bool
}

// OpenServerTokens accepts every token: the worker runs without a tokens file (and says so
// at start).
func OpenServerTokens() ServerTokens { return ServerTokens{open: true} }

// ParseServerTokens reads the file: one `peer_id:hash` per line, `#` starting a comment line,
// blank lines ignored, peer `*` matching any peer. A hash is an argon2id PHC string (leading
// `$`) or the lowercase SHA-256 hex of the token; any other form is refused with the line
// number, so a typo fails at start instead of refusing every server later. A peer may have
// several lines (a token being rotated); any of them matching is enough.
func ParseServerTokens(data []byte) (ServerTokens, error) {
	t := ServerTokens{byPeer: map[string][]string{}}
	err := scanPairLines(data, ErrBadServerTokensFile, "peer_id:hash", func(n int, peer, hash string) error {
		if err := peertoken.CheckStored(hash); err != nil {
			return fmt.Errorf("%w: line %d: %w", ErrBadServerTokensFile, n, err)
		}
		if peer == session.WildcardPeer {
			t.wildcard = append(t.wildcard, hash)
		} else {
			t.byPeer[peer] = append(t.byPeer[peer], hash)
		}
		return nil
	})
	if err != nil {
		return ServerTokens{}, err
	}
	return t, nil
}

// Valid answers the dialed role's VerifyTokens: the peer IDs, in order, whose token matches a
// hash of that peer or a `*` hash. It stops at the first token that matches nothing, since
// one failure refuses the server anyway: a server without a valid token costs at most the
// hashing of one token against the lines that could match it.
func (t ServerTokens) Valid(pairs []wire.PeerToken) []string {
	if len(pairs) > maxAuthenticateTokens {
		return nil
	}
	var valid []string
	for _, p := range pairs {
		if !t.matches(p) {
			break
		}
		valid = append(valid, p.PeerID)
	}
	return valid
}

func (t ServerTokens) matches(p wire.PeerToken) bool {
	if t.open {
		return true
	}
	for _, hashes := range [][]string{t.byPeer[p.PeerID], t.wildcard} {
		for _, h := range hashes {
			if peertoken.Verify(h, p.Token) {
				return true
			}
		}
	}
	return false
}

// Open reports whether every server is accepted (no tokens file).
func (t ServerTokens) Open() bool { return t.open }

// Lines counts the hash lines.
func (t ServerTokens) Lines() int {
	n := len(t.wildcard)
	for _, hs := range t.byPeer {
		n += len(hs)
	}
	return n
}

// serverTokensFileName names the accepted server tokens file in errors.
const serverTokensFileName = "accepted server tokens file"

// serverTokensFile is the tokens file as last read. It is read again for every server that
// dials in, so an operator can add or rotate a server's hash without a restart; a file that
// became unreadable or malformed keeps the tokens read before, with a warning.
type serverTokensFile struct {
	path string
	log  *slog.Logger

	mu     sync.Mutex
	digest [32]byte
	tokens ServerTokens
}

// loadServerTokensFile reads path at start; an empty path accepts every server.
func loadServerTokensFile(path string, log *slog.Logger) (*serverTokensFile, error) {
	f := &serverTokensFile{path: path, log: log, tokens: OpenServerTokens()}
	if path == "" {
		return f, nil
	}
	data, err := readBounded(path, serverTokensFileName, ErrBadServerTokensFile)
	if err != nil {
		return nil, err
	}
	if f.tokens, err = ParseServerTokens(data); err != nil {
		return nil, err
	}
	f.digest = sha256.Sum256(data)
	return f, nil
}

// current is the tokens to check a dialing server against.
func (f *serverTokensFile) current() ServerTokens {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.path == "" {
		return f.tokens
	}
	data, err := readBounded(f.path, serverTokensFileName, ErrBadServerTokensFile)
	if digest := sha256.Sum256(data); err == nil && digest != f.digest {
		var t ServerTokens
		if t, err = ParseServerTokens(data); err == nil {
			f.tokens, f.digest = t, digest
			f.log.Info("worker: accepted server tokens file changed", "lines", t.Lines())
		}
	}
	if err != nil {
		f.log.Warn("worker: accepted server tokens file unreadable, keeping the tokens read before", "err", err)
	}
	return f.tokens
}
