package repocred

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
)

// Kind is what a credential is.
type Kind uint8

const (
	// None: a public repository, or a URL that takes no credential (file://, a path).
	None Kind = iota
	// SSHKey: an OpenSSH private key, for ssh:// and scp-like (git@host:path) URLs.
	SSHKey
	// HTTPSToken: a token sent as the password of HTTP basic authentication, for https://.
	HTTPSToken
)

func (k Kind) String() string {
	switch k {
	case SSHKey:
		return "ssh key"
	case HTTPSToken:
		return "https token"
	}
	return "none"
}

// DefaultUsername goes with a token when none is set: GitHub wants it for app and
// fine-grained tokens; GitLab and Gitea accept any username with a token.
const DefaultUsername = "x-access-token"

// MaxSecret bounds a key or token (an RSA-8192 OpenSSH key is under 7 KiB).
const MaxSecret = 16 << 10

// Purposes the server seals credentials under (aeadbox binds a sealed value to its purpose).
const (
	PurposeSSHKey     = "gradient project ssh key v1"
	PurposeHTTPSToken = "gradient project https token v1"
)

// Credential is a project's secret for its repository.
type Credential struct {
	Kind Kind
	// Secret is the OpenSSH private key (PEM) or the token.
	Secret []byte
	// Username goes with a token; "" means DefaultUsername.
	Username string
}

// ErrInvalid: a token, username or wire credential that cannot be used.
var ErrInvalid = errors.New("repocred: invalid credential")

// ForURL is the kind of credential a repository URL takes. Plain http:// takes none: a token
// is never sent unencrypted.
func ForURL(raw string) Kind {
	if i := strings.Index(raw, "://"); i >= 0 {
		switch strings.ToLower(raw[:i]) {
		case "https":
			return HTTPSToken
		case "ssh", "git+ssh", "ssh+git":
			return SSHKey
		}
		return None
	}
	// scp-like syntax: [user@]host:path, with no slash before the first colon.
	colon := strings.IndexByte(raw, ':')
	if colon > 0 && !strings.Contains(raw[:colon], "/") {
		return SSHKey
	}
	return None
}

// Wipe zeroes the secret.
func (c *Credential) Wipe() { clear(c.Secret) }

// CheckToken validates a token and its username: printable ASCII without spaces (no newline
// can reach git's credential protocol), within MaxSecret.
func CheckToken(username string, token []byte) error {
	if len(token) == 0 || len(token) > MaxSecret || !printable(token) {
		return fmt.Errorf("%w: a token is 1 to %d printable ASCII characters without spaces", ErrInvalid, MaxSecret)
	}
	if len(username) > 256 || !printable([]byte(username)) || strings.ContainsAny(username, ":") {
		return fmt.Errorf("%w: a username is at most 256 printable ASCII characters without spaces or colons", ErrInvalid)
	}
	return nil
}

func printable(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// WireData is the Credential message's data: the key itself, or "username\ntoken". The
// protocol has one credential kind (SshKey); the repository URL of the job it precedes says
// how the data is meant (gradient-server §13.3).
func (c Credential) WireData() []byte {
	if c.Kind != HTTPSToken {
		return bytes.Clone(c.Secret)
	}
	user := c.Username
	if user == "" {
		user = DefaultUsername
	}
	return append([]byte(user+"\n"), c.Secret...)
}

// FromWire reads a Credential message's data for a job that fetches url. Data for a URL that
// takes no credential is refused rather than guessed at.
func FromWire(url string, data []byte) (Credential, error) {
	switch ForURL(url) {
	case SSHKey:
		if len(data) == 0 || len(data) > MaxSecret {
			return Credential{}, fmt.Errorf("%w: ssh key of %d bytes", ErrInvalid, len(data))
		}
		return Credential{Kind: SSHKey, Secret: bytes.Clone(data)}, nil
	case HTTPSToken:
		return decodeToken(data)
	}
	return Credential{}, fmt.Errorf("%w: %s takes no credential", ErrInvalid, redact(url))
}

func decodeToken(data []byte) (Credential, error) {
	if len(data) > MaxSecret+257 {
		return Credential{}, fmt.Errorf("%w: token of %d bytes", ErrInvalid, len(data))
	}
	user, token, ok := bytes.Cut(data, []byte("\n"))
	if !ok || len(user) == 0 {
		return Credential{}, fmt.Errorf("%w: token data is not username and token", ErrInvalid)
	}
	if err := CheckToken(string(user), token); err != nil {
		return Credential{}, err
	}
	return Credential{Kind: HTTPSToken, Username: string(user), Secret: bytes.Clone(token)}, nil
}

// Sealed is a project's credentials as the store keeps them, each sealed or nil.
type Sealed struct{ SSHKeyEnc, HTTPSTokenEnc []byte }

// Open unseals the credential the project's repository URL takes: its SSH key for an SSH
// URL, its token for https://. Kind None when the URL takes none or none is set.
func Open(box *aeadbox.Box, repoURL string, s Sealed) (Credential, error) {
	switch kind := ForURL(repoURL); {
	case kind == SSHKey && len(s.SSHKeyEnc) > 0:
		key, err := box.Open(PurposeSSHKey, s.SSHKeyEnc)
		if err != nil {
			return Credential{}, fmt.Errorf("repocred: opening the deploy key: %w", err)
		}
		return Credential{Kind: SSHKey, Secret: key}, nil
	case kind == HTTPSToken && len(s.HTTPSTokenEnc) > 0:
		data, err := box.Open(PurposeHTTPSToken, s.HTTPSTokenEnc)
		if err != nil {
			return Credential{}, fmt.Errorf("repocred: opening the https token: %w", err)
		}
		defer clear(data)
		return decodeToken(data)
	}
	return Credential{}, nil
}

// SealToken seals a token with its username for the store ("" means DefaultUsername).
func SealToken(box *aeadbox.Box, username string, token []byte) ([]byte, error) {
	if username == "" {
		username = DefaultUsername
	}
	if err := CheckToken(username, token); err != nil {
		return nil, err
	}
	data := Credential{Kind: HTTPSToken, Username: username, Secret: token}.WireData()
	defer clear(data)
	return box.Seal(PurposeHTTPSToken, data)
}

// redact drops user info (a token written into an https URL) for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = url.User("…")
	return u.String()
}
