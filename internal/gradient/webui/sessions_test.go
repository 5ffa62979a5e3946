package webui

import (
	"crypto/rand"
	"testing"
	"time"
)

func TestSessionsAreBoundedAndExpire(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(rand.Reader, func() time.Time { return now }, time.Hour, 2)
	first, _, _ := s.open("k1")
	now = now.Add(time.Minute)
	second, csrf, _ := s.open("k2")
	now = now.Add(time.Minute)
	third, _, _ := s.open("k3")
	if _, ok := s.get(first); ok {
		t.Error("the session closest to expiry was kept past the bound")
	}
	if v, ok := s.get(second); !ok || v.keyHash != "k2" || v.csrf != csrf || len(s.live) != 2 {
		t.Errorf("second session: %+v %v (%d live)", v, ok, len(s.live))
	}
	now = now.Add(time.Hour)
	if _, ok := s.get(third); ok {
		t.Error("an expired session still answers")
	}
	s.close(second)
	if _, ok := s.get(second); ok {
		t.Error("a closed session still answers")
	}
}

func TestOneTimeTokensAreGoodOnceAndExpire(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(rand.Reader, func() time.Time { return now }, time.Hour, 10)
	token, _ := s.mintOneTime("k", time.Minute)
	if k, ok := s.redeem(token); !ok || k != "k" {
		t.Fatalf("first redeem: %q %v", k, ok)
	}
	if _, ok := s.redeem(token); ok {
		t.Error("a token redeemed twice")
	}
	late, _ := s.mintOneTime("k", time.Minute)
	now = now.Add(2 * time.Minute)
	if _, ok := s.redeem(late); ok {
		t.Error("an expired token redeemed")
	}
	for secret := range s.oneTimes {
		if string(secret[:]) == token {
			t.Error("a token is held in the clear")
		}
	}
}
