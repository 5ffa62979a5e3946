package upstream

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrBadUpstream: an upstream URL or key an operator gave is refused.
var ErrBadUpstream = errors.New("upstream: invalid upstream")

// maxURLLen bounds an upstream URL.
const maxURLLen = 2048

// CheckURL validates an upstream's root URL and returns it without trailing slashes: http
// or https with a host, or file with an absolute path; no user info (it would be a secret
// in the state and the logs), no query, no fragment.
func CheckURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || len(s) > maxURLLen || strings.ContainsAny(s, " \t\r\n") {
		return "", fmt.Errorf("%w: url %q", ErrBadUpstream, s)
	}
	switch {
	case u.User != nil:
		return "", fmt.Errorf("%w: url %q carries credentials", ErrBadUpstream, u.Redacted())
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", fmt.Errorf("%w: url %q has a query or fragment", ErrBadUpstream, s)
	case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
	case u.Scheme == "file" && u.Host == "" && strings.HasPrefix(u.Path, "/"):
	default:
		return "", fmt.Errorf("%w: url %q: want http://, https:// or file:///", ErrBadUpstream, s)
	}
	out := strings.TrimRight(s, "/")
	if out == "file:" || strings.HasSuffix(out, "://") {
		return "", fmt.Errorf("%w: url %q names no root", ErrBadUpstream, s)
	}
	return out, nil
}

// CheckKey validates a trusted public key in Nix's "name:base64" form (what
// `nix key convert-secret-to-public` prints) and returns it trimmed.
func CheckKey(s string) (string, error) {
	s = strings.TrimSpace(s)
	name, b64, ok := strings.Cut(s, ":")
	if !ok || name == "" || len(name) > 128 || strings.ContainsAny(name, ": \t\r\n") {
		return "", fmt.Errorf("%w: key %q: want name:base64", ErrBadUpstream, s)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%w: key %q is not %d bytes of base64", ErrBadUpstream, name, ed25519.PublicKeySize)
	}
	return s, nil
}
