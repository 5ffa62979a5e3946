package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/subtle"
	"errors"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key file layout (see the package doc).
const (
	keyFileHeader = "pace-node-key v1"
	seedPrefix    = "private-seed "
	publicPrefix  = "public-key "
	// maxStateFileLen bounds what is read from node-key or node-id.
	maxStateFileLen = 4096
)

// encodeKeyFile renders the node-key file.
func encodeKeyFile(k *Key) []byte {
	var b bytes.Buffer
	b.WriteString(keyFileHeader + "\n")
	b.WriteString(seedPrefix + edkey.Encoding.EncodeToString(k.seed()) + "\n")
	b.WriteString(publicPrefix + k.PublicText() + "\n")
	return b.Bytes()
}

// decodeKeyFile parses the node-key file strictly; its errors say what is
// wrong in words an operator can act on.
func decodeKeyFile(data []byte) (*Key, error) {
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		return nil, errors.New("it is truncated (it does not end with a newline)")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] != keyFileHeader {
		return nil, fmt.Errorf("it is not a pace node key (its first line is not %q)", keyFileHeader)
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[1], seedPrefix) || !strings.HasPrefix(lines[2], publicPrefix) {
		return nil, fmt.Errorf("it is truncated or malformed (want the lines %q, %q<key>, %q<key>)", keyFileHeader, seedPrefix, publicPrefix)
	}
	seed, err := edkey.Encoding.DecodeString(strings.TrimPrefix(lines[1], seedPrefix))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("its private-seed line is not 43 characters of unpadded base64url")
	}
	pub, err := edkey.Encoding.DecodeString(strings.TrimPrefix(lines[2], publicPrefix))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, errors.New("its public-key line is not 43 characters of unpadded base64url")
	}
	k := &Key{private: ed25519.NewKeyFromSeed(seed)}
	if subtle.ConstantTimeCompare(k.Public(), pub) != 1 {
		return nil, errors.New("its two halves disagree (the public key is not the seed's)")
	}
	return k, nil
}

// MaxNodeIDLen bounds a node id (pace-node §13.15).
const MaxNodeIDLen = 64

// ErrNodeID refuses a node id outside the grammar.
var ErrNodeID = errors.New("a node id is 1 to 64 bytes of letters, digits, '-', '.' and '_'")

// ValidateNodeID checks an id against the grammar: letters and digits of
// any script plus "-._", so that it survives every place an id is written
// (cluster-admit's "<id>=<host>:<port>@<key>", log lines, file names).
func ValidateNodeID(id string) error {
	if id == "" || len(id) > MaxNodeIDLen || !utf8.ValidString(id) {
		return fmt.Errorf("%w: %q", ErrNodeID, id)
	}
	for _, r := range id {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-._", r) {
			return fmt.Errorf("%w: %q contains %q", ErrNodeID, id, r)
		}
	}
	return nil
}

// decodeNodeIDFile reads node-id: the id, optionally followed by one
// newline.
func decodeNodeIDFile(data []byte) (string, error) {
	id := strings.TrimSuffix(string(data), "\n")
	if err := ValidateNodeID(id); err != nil {
		return "", fmt.Errorf("it does not hold one node id: %w", err)
	}
	return id, nil
}
