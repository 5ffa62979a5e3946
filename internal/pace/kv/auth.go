package kv

import (
	"crypto/subtle"
	"errors"
	"strings"
	"sync/atomic"
)

// ErrBlankPassword is a password that is empty or only whitespace. It never turns
// authentication off: that takes an explicit choice (--no-auth, DisablePassword).
var ErrBlankPassword = errors.New("the password is empty or only whitespace")

// password is the reloadable secret. The zero value requires nothing.
type password struct {
	secret atomic.Pointer[[]byte]
}

// set installs secret; a blank one is refused and the old secret stays.
func (p *password) set(secret string) error {
	if strings.TrimSpace(secret) == "" {
		return ErrBlankPassword
	}
	b := []byte(secret)
	p.secret.Store(&b)
	return nil
}

// clear turns authentication off.
func (p *password) clear() { p.secret.Store(nil) }

// required reports whether verbs other than AUTH need an accepted AUTH on the connection.
func (p *password) required() bool { return p.secret.Load() != nil }

// accepts compares in constant time. pace-kv has one credential, so the username must be the
// empty default or "default" (Redis's spelling of the same thing).
func (p *password) accepts(username, secret []byte) bool {
	want := p.secret.Load()
	if want == nil {
		return false
	}
	userOK := len(username) == 0 || string(username) == "default"
	match := subtle.ConstantTimeCompare(secret, *want) == 1
	return userOK && match
}
