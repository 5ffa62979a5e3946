package kv

import (
	"crypto/subtle"
	"sync/atomic"
)

// password is the reloadable secret. The zero value requires nothing.
type password struct {
	secret atomic.Pointer[[]byte]
}

func (p *password) set(secret string) {
	if secret == "" {
		p.secret.Store(nil)
		return
	}
	b := []byte(secret)
	p.secret.Store(&b)
}

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
