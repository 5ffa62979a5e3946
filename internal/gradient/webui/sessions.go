package webui

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"io"
	"sync"
	"time"
)

// session is one signed-in browser: the API key it stands for (by hash, looked up again on
// every request so a revoked key ends it) and its CSRF token.
type session struct {
	keyHash string
	csrf    string
	expires time.Time
}

// sessions holds the signed-in browsers and the unused one-time sign-in tokens, by the
// SHA-256 of their secret (a memory dump does not hand out cookies). Both are bounded: past
// max, the entry closest to expiry goes.
type sessions struct {
	mu       sync.Mutex
	rand     io.Reader
	now      func() time.Time
	ttl      time.Duration
	max      int
	live     map[[32]byte]session
	oneTimes map[[32]byte]oneTime
}

// oneTime is a sign-in link's token: the key it signs in as, good once, until expires.
type oneTime struct {
	keyHash string
	expires time.Time
}

func newSessions(r io.Reader, now func() time.Time, ttl time.Duration, max int) *sessions {
	return &sessions{rand: r, now: now, ttl: ttl, max: max, live: map[[32]byte]session{}, oneTimes: map[[32]byte]oneTime{}}
}

func (s *sessions) secret() (string, error) {
	b := make([]byte, 32)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func digest(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// open starts a session for the key and returns its cookie value and CSRF token.
func (s *sessions) open(keyHash string) (cookie, csrf string, err error) {
	if cookie, err = s.secret(); err != nil {
		return "", "", err
	}
	if csrf, err = s.secret(); err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	evictSoonest(s.live, s.max, func(v session) time.Time { return v.expires })
	s.live[digest(cookie)] = session{keyHash: keyHash, csrf: csrf, expires: s.now().Add(s.ttl)}
	return cookie, csrf, nil
}

// get returns the live session of a cookie value.
func (s *sessions) get(cookie string) (session, bool) {
	if cookie == "" {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := digest(cookie)
	v, ok := s.live[d]
	if ok && !s.now().Before(v.expires) {
		delete(s.live, d)
		return session{}, false
	}
	return v, ok
}

// close ends a session.
func (s *sessions) close(cookie string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, digest(cookie))
}

// mintOneTime makes a sign-in token for the key, good once within ttl.
func (s *sessions) mintOneTime(keyHash string, ttl time.Duration) (string, error) {
	token, err := s.secret()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	evictSoonest(s.oneTimes, s.max, func(v oneTime) time.Time { return v.expires })
	s.oneTimes[digest(token)] = oneTime{keyHash: keyHash, expires: s.now().Add(ttl)}
	return token, nil
}

// redeem spends a one-time token: its key hash the first time, never again.
func (s *sessions) redeem(token string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := digest(token)
	v, ok := s.oneTimes[d]
	delete(s.oneTimes, d)
	if !ok || !s.now().Before(v.expires) {
		return "", false
	}
	return v.keyHash, true
}

// sweep drops what expired; called under mu when something is added.
func (s *sessions) sweep() {
	now := s.now()
	for k, v := range s.live {
		if !now.Before(v.expires) {
			delete(s.live, k)
		}
	}
	for k, v := range s.oneTimes {
		if !now.Before(v.expires) {
			delete(s.oneTimes, k)
		}
	}
}

// evictSoonest makes room for one more entry under max by dropping the soonest to expire.
func evictSoonest[V any](m map[[32]byte]V, max int, expires func(V) time.Time) {
	for len(m) >= max {
		var victim [32]byte
		var at time.Time
		first := true
		for k, v := range m {
			if first || expires(v).Before(at) {
				victim, at, first = k, expires(v), false
			}
		}
		delete(m, victim)
	}
}

// sameToken compares CSRF tokens in constant time.
func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
