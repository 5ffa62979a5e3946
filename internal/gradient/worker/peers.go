package worker

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// ErrBadPeersFile: a line of the peers file is not `peer_id:token`. The error names the line
// number, never its content (it holds a secret).
var ErrBadPeersFile = errors.New("worker: bad peers file")

// maxPeersFileSize bounds what is read from the peers file.
const maxPeersFileSize = 1 << 20

// ParsePeers reads a peers file (gradient-protocol §4.2): one `peer_id:token` per line, `#`
// starting a comment line, blank lines ignored, a `*:token` line answering every challenged
// peer.
func ParsePeers(data []byte) ([]wire.PeerToken, error) {
	var out []wire.PeerToken
	err := scanPairLines(data, ErrBadPeersFile, "peer_id:token", func(_ int, peer, token string) error {
		out = append(out, wire.PeerToken{PeerID: peer, Token: token})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanPairLines reads the `peer_id:secret` line format the peers file and the accepted server
// tokens file share, calling each for every pair with its line number. A malformed line is
// reported as bad (wrapping errBad) with its number, never its content: it holds a secret.
func scanPairLines(data []byte, errBad error, shape string, each func(n int, peer, secret string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxPeersFileSize)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		peer, secret, ok := strings.Cut(line, ":")
		peer, secret = strings.TrimSpace(peer), strings.TrimSpace(secret)
		if !ok || peer == "" || secret == "" {
			return fmt.Errorf("%w: line %d: want %s", errBad, n, shape)
		}
		if err := each(n, peer, secret); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %v", errBad, err)
	}
	return nil
}

// peersFile is the peers file as last read: its tokens and a digest of its bytes, to tell
// a real change from a touch.
type peersFile struct {
	path   string
	digest [32]byte
	tokens session.PeerTokens
}

// loadPeersFile reads and parses path. An empty path means no peers file: no tokens.
func loadPeersFile(path string) (peersFile, error) {
	pf := peersFile{path: path, tokens: session.NewPeerTokens(nil)}
	if path == "" {
		return pf, nil
	}
	data, err := readBounded(path, "peers file", ErrBadPeersFile)
	if err != nil {
		return pf, err
	}
	pairs, err := ParsePeers(data)
	if err != nil {
		return pf, err
	}
	pf.digest, pf.tokens = sha256.Sum256(data), session.NewPeerTokens(pairs)
	return pf, nil
}

// readBounded reads a small local file (the peers file, the accepted server tokens file),
// refusing one over maxPeersFileSize as errBad; name says which file in errors.
func readBounded(path, name string, errBad error) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("worker: %s: %w", name, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxPeersFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("worker: %s: %w", name, err)
	}
	if len(data) > maxPeersFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", errBad, maxPeersFileSize)
	}
	return data, nil
}
