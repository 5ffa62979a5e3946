package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// MaxTokenFile bounds the token file: it is read whole, so a larger file is refused before
// anything is allocated for it.
const MaxTokenFile = 4096

// CookieName is the cookie a browser gets after presenting ?token= once.
const CookieName = "pace_fleet"

// ErrEmptyToken is a token file holding nothing but whitespace: the dashboard fails closed
// rather than serving anyone.
var ErrEmptyToken = errors.New("empty or whitespace only: the dashboard would be open to anyone; write a token into it")

// Token is the dashboard credential. The zero value means no token is configured. It never
// prints its secret, whatever verb formats it.
type Token struct {
	secret []byte
	cookie string // derived: the cookie carries this, never the token itself
}

// LoadToken reads a token file: its content less surrounding whitespace.
func LoadToken(path string) (Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return Token{}, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxTokenFile {
		return Token{}, fmt.Errorf("token file %s: larger than %d bytes", path, MaxTokenFile)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxTokenFile+1))
	if err != nil {
		return Token{}, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(raw) > MaxTokenFile {
		return Token{}, fmt.Errorf("token file %s: larger than %d bytes", path, MaxTokenFile)
	}
	tok, err := NewToken(string(raw))
	if err != nil {
		return Token{}, fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// NewToken makes a token of text less surrounding whitespace; whitespace alone is refused.
func NewToken(text string) (Token, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return Token{}, ErrEmptyToken
	}
	mac := hmac.New(sha256.New, []byte(t))
	mac.Write([]byte("pace-node dashboard cookie v1"))
	return Token{secret: []byte(t), cookie: hex.EncodeToString(mac.Sum(nil))}, nil
}

// Set reports whether a token is configured.
func (t Token) Set() bool { return len(t.secret) > 0 }

// String hides the secret.
func (t Token) String() string {
	if t.Set() {
		return "<dashboard token>"
	}
	return "<no dashboard token>"
}

// GoString hides the secret from %#v.
func (t Token) GoString() string { return t.String() }

// equal compares in constant time; hashing first keeps the length out of the timing too.
func (t Token) equal(presented string) bool {
	a, b := sha256.Sum256(t.secret), sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func (t Token) cookieEqual(presented string) bool {
	a, b := sha256.Sum256([]byte(t.cookie)), sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// authorized reports whether r carries the token: Bearer, Basic with any username, or the
// cookie ?token= set.
func (t Token) authorized(r *http.Request) bool {
	if !t.Set() {
		return true
	}
	if scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok {
		switch strings.ToLower(scheme) {
		case "bearer":
			return t.equal(strings.TrimSpace(cred))
		case "basic":
			raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
			_, pass, ok := strings.Cut(string(raw), ":")
			return err == nil && ok && t.equal(pass)
		}
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return t.cookieEqual(c.Value)
	}
	return false
}

// sessionCookie is what a browser keeps after ?token=: HttpOnly so no script reads it,
// SameSite=Strict so no other site's page can make the browser send it.
func (t Token) sessionCookie() *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: t.cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
}
