package forgehook

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// Forge is a forge whose deliveries the server reads.
type Forge string

// The forges, as they appear in the hook path /api/v1/hooks/{forge}/{project}.
const (
	GitHub Forge = "github"
	Gitea  Forge = "gitea" // Forgejo too: it sends Gitea's headers
	GitLab Forge = "gitlab"
)

// Forges lists every forge, for counters and documentation.
var Forges = []Forge{GitHub, Gitea, GitLab}

// ParseForge reads the forge of a hook path; "forgejo" is Gitea's dialect.
func ParseForge(s string) (Forge, bool) {
	switch s {
	case "github":
		return GitHub, true
	case "gitea", "forgejo":
		return Gitea, true
	case "gitlab":
		return GitLab, true
	}
	return "", false
}

// Refusals of Verify.
var (
	ErrNoSecret         = errors.New("forgehook: no webhook secret configured")
	ErrMissingSignature = errors.New("forgehook: the delivery carries no signature")
	ErrBadSignature     = errors.New("forgehook: the signature does not match")
)

// HasSignature reports whether the delivery carries the forge's signature header at all,
// so a handler can refuse an unsigned delivery before it reads the body.
func HasSignature(f Forge, h http.Header) bool { return signature(f, h) != "" }

func signature(f Forge, h http.Header) string {
	switch f {
	case GitHub:
		return h.Get("X-Hub-Signature-256")
	case Gitea:
		if s := h.Get("X-Gitea-Signature"); s != "" {
			return s
		}
		return h.Get("X-Forgejo-Signature")
	case GitLab:
		return h.Get("X-Gitlab-Token")
	}
	return ""
}

// Verify checks a delivery against the project's secret in constant time (the comparison
// does not depend on where the first difference is). It parses nothing: call it before
// Parse. An empty secret verifies nothing (fail closed).
func Verify(f Forge, secret []byte, h http.Header, body []byte) error {
	if len(secret) == 0 {
		return ErrNoSecret
	}
	sig := signature(f, h)
	if sig == "" {
		return ErrMissingSignature
	}
	if f == GitLab {
		// Hash both sides so the comparison's length is fixed too.
		got, want := sha256.Sum256([]byte(sig)), sha256.Sum256(secret)
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return ErrBadSignature
		}
		return nil
	}
	if f == GitHub {
		var ok bool
		if sig, ok = strings.CutPrefix(sig, "sha256="); !ok {
			return ErrBadSignature
		}
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return ErrBadSignature
	}
	if !hmac.Equal(got, Sign(secret, body)) {
		return ErrBadSignature
	}
	return nil
}

// Sign is the HMAC-SHA256 of body under secret, as GitHub and Gitea send it (hex-encoded).
func Sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// SignatureHeaders are the headers a forge would send for body under secret: what tests and
// tools use to make a delivery.
func SignatureHeaders(f Forge, secret, body []byte) http.Header {
	h := http.Header{}
	switch f {
	case GitHub:
		h.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(Sign(secret, body)))
	case Gitea:
		h.Set("X-Gitea-Signature", hex.EncodeToString(Sign(secret, body)))
	case GitLab:
		h.Set("X-Gitlab-Token", string(secret))
	}
	return h
}
