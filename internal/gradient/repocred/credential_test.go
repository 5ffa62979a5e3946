package repocred

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func TestForURL(t *testing.T) {
	for url, want := range map[string]Kind{
		"https://github.com/o/r.git": HTTPSToken,
		"HTTPS://host/r":             HTTPSToken,
		"http://host/r":              None, // a token never goes out unencrypted
		"ssh://git@host:2222/r.git":  SSHKey,
		"git+ssh://host/r":           SSHKey,
		"git@github.com:o/r.git":     SSHKey,
		"host:r":                     SSHKey,
		"file:///srv/r":              None,
		"/srv/git/r":                 None,
		"./a:b":                      None,
		"git://host/r":               None,
		"":                           None,
	} {
		if got := ForURL(url); got != want {
			t.Errorf("ForURL(%q) = %v, want %v", url, got, want)
		}
	}
}

func TestFromWire(t *testing.T) {
	key := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n…\n")
	tests := []struct {
		name, url string
		data      []byte
		want      Credential
		err       bool
	}{
		{"ssh key", "ssh://h/r", key, Credential{Kind: SSHKey, Secret: key}, false},
		{"empty key", "git@h:r", nil, Credential{}, true},
		{"token", "https://h/r", []byte("oauth2\nglpat-abc"), Credential{Kind: HTTPSToken, Username: "oauth2", Secret: []byte("glpat-abc")}, false},
		{"token without username", "https://h/r", []byte("glpat-abc"), Credential{}, true},
		{"empty username", "https://h/r", []byte("\nabc"), Credential{}, true},
		{"token with newline", "https://h/r", []byte("u\nabc\ndef"), Credential{}, true},
		{"token with space", "https://h/r", []byte("u\nab c"), Credential{}, true},
		{"username with colon", "https://h/r", []byte("a:b\nabc"), Credential{}, true},
		{"url without credential", "file:///r", key, Credential{}, true},
		{"oversized key", "ssh://h/r", make([]byte, MaxSecret+1), Credential{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromWire(tt.url, tt.data)
			if tt.err {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("FromWire = %v, %v; want ErrInvalid", got, err)
				}
				return
			}
			if err != nil || got.Kind != tt.want.Kind || got.Username != tt.want.Username || !bytes.Equal(got.Secret, tt.want.Secret) {
				t.Fatalf("FromWire = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// A valid token survives the wire unchanged, and the default username fills in.
func TestTokenWireRoundTripProperty(t *testing.T) {
	printableNoSpace := rapid.StringMatching(`[!-~]{1,64}`)
	rapid.Check(t, func(t *rapid.T) {
		user := rapid.OneOf(rapid.Just(""), rapid.StringMatching(`[!-9;-~]{1,32}`)).Draw(t, "user")
		token := printableNoSpace.Draw(t, "token")
		c := Credential{Kind: HTTPSToken, Username: user, Secret: []byte(token)}
		got, err := FromWire("https://forge.example/o/r.git", c.WireData())
		if err != nil {
			t.Fatalf("FromWire(WireData(%+v)): %v", c, err)
		}
		wantUser := user
		if wantUser == "" {
			wantUser = DefaultUsername
		}
		if got.Username != wantUser || string(got.Secret) != token {
			t.Fatalf("round trip: got %q/%q, want %q/%q", got.Username, got.Secret, wantUser, token)
		}
	})
}

// Whatever the server sends, FromWire either refuses it or returns a token git's credential
// protocol cannot misread (no newline, no NUL, no space).
func FuzzFromWire(f *testing.F) {
	f.Add("https://h/r", []byte("x-access-token\nghp_abc"))
	f.Add("https://h/r", []byte("u\na\nb"))
	f.Add("git@h:r", []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"))
	f.Add("file:///r", []byte("x"))
	f.Fuzz(func(t *testing.T, url string, data []byte) {
		c, err := FromWire(url, data)
		if err != nil {
			return
		}
		if c.Kind == HTTPSToken && (!printable(c.Secret) || !printable([]byte(c.Username))) {
			t.Fatalf("accepted an unprintable token: %q %q", c.Username, c.Secret)
		}
		if c.Kind == None || c.Kind != ForURL(url) {
			t.Fatalf("FromWire(%q) gave kind %v", url, c.Kind)
		}
	})
}

func TestRefused(t *testing.T) {
	for msg, want := range map[string]bool{
		"git@127.0.0.1: Permission denied (publickey).\r\nfatal: Could not read from remote repository.": true,
		"fatal: Authentication failed for 'https://h/r.git/'":                                            true,
		"fatal: could not read Username for 'https://h': terminal prompts disabled":                      true,
		"remote: Repository not found.\nfatal: repository 'https://github.com/o/r.git/' not found":       true,
		"fatal: unable to access 'https://h/r/': The requested URL returned error: 403":                  true,
		"Host key verification failed.":                                                                  true,
		"ssh: connect to host 127.0.0.1 port 1: Connection refused":                                      false,
		"fatal: unable to access 'https://h/': Could not resolve host: h":                                false,
		"fatal: the remote end hung up unexpectedly":                                                     false,
	} {
		if got := Refused(msg); got != want {
			t.Errorf("Refused(%q) = %v, want %v", msg, got, want)
		}
	}
}
