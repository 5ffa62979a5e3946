package repocred

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Generate makes a new Ed25519 deploy key and returns it in OpenSSH private key format (PEM,
// unencrypted: it is sealed at rest instead), with comment inside. rnd nil means crypto/rand.
func Generate(rnd io.Reader, comment string) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	_, priv, err := ed25519.GenerateKey(rnd)
	if err != nil {
		return nil, fmt.Errorf("repocred: generating a key: %w", err)
	}
	return marshal(priv, comment)
}

// ParseKey checks a private key given by an operator (OpenSSH, PKCS#1, PKCS#8 or SEC1 PEM:
// Ed25519, RSA or ECDSA) and returns it re-encoded in OpenSSH format, the one every ssh
// reads. A key with a passphrase is refused: the worker could not use it.
func ParseKey(pemBytes []byte, comment string) ([]byte, error) {
	if len(pemBytes) > MaxSecret {
		return nil, fmt.Errorf("%w: a key file of %d bytes (at most %d)", ErrInvalid, len(pemBytes), MaxSecret)
	}
	raw, err := ssh.ParseRawPrivateKey(pemBytes)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%w: the key has a passphrase; remove it (ssh-keygen -p) since the key is sealed at rest", ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not a private key: %w", ErrInvalid, err)
	}
	if p, ok := raw.(*ed25519.PrivateKey); ok {
		raw = *p
	}
	return marshal(raw, comment)
}

func marshal(key crypto.PrivateKey, comment string) ([]byte, error) {
	block, err := ssh.MarshalPrivateKey(key, comment)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return pem.EncodeToMemory(block), nil
}

// PublicKey is a deploy key's public half as a forge's deploy-key page wants it.
type PublicKey struct {
	AuthorizedKey string // "ssh-ed25519 AAAA… comment", one line
	Fingerprint   string // "SHA256:…"
}

// AuthorizedKey derives the public key, in authorized_keys form with comment, from a
// private key in OpenSSH format.
func AuthorizedKey(private []byte, comment string) (PublicKey, error) {
	signer, err := ssh.ParsePrivateKey(private)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w: not a private key: %w", ErrInvalid, err)
	}
	pub := signer.PublicKey()
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	if comment = strings.Join(strings.Fields(comment), "-"); comment != "" {
		line += " " + comment
	}
	return PublicKey{AuthorizedKey: line, Fingerprint: ssh.FingerprintSHA256(pub)}, nil
}
