package discovery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/discoverywire"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Cookie is the stateless challenge of pace-node §13.5.
type Cookie = [discoverywire.CookieLen]byte

// claim is what a cookie binds: where the beacon came from, who it claimed to be and at
// which endpoints, and the challenger's cluster, so that a proof is accepted only from the
// address challenged, for the same claim, answering this cluster.
type claim struct {
	from                       netip.AddrPort
	nodeID                     string
	nodeEndpoint, raftEndpoint string
	cluster                    string
}

// jar mints and checks cookies: a serial and HMAC-SHA256 under a per-process secret that
// rotates every `every`, over the claim, the serial and the epoch. The current and the
// previous epoch's secrets are kept, so a cookie is good for one to two rotations and no
// challenge table is needed. The serial makes every challenge's cookie distinct, so that
// spending one on a verified proof leaves the next challenge of the same claim good.
type jar struct {
	every   time.Duration
	rand    io.Reader
	secrets [2]secret // current, previous
	serial  uint64
}

type secret struct {
	epoch uint64
	key   [32]byte
	set   bool
}

// serialLen is the cookie's leading serial; the rest is the MAC, truncated to 192 bits.
const serialLen = 8

func (j *jar) epoch(now time.Time) uint64 { return uint64(now.UnixNano()) / uint64(j.every) }

// mint returns a fresh cookie for c now, drawing a new secret when the epoch has moved.
func (j *jar) mint(now time.Time, c claim) (Cookie, error) {
	e := j.epoch(now)
	if cur := j.secrets[0]; !cur.set || cur.epoch != e {
		next := secret{epoch: e, set: true}
		if _, err := io.ReadFull(j.rand, next.key[:]); err != nil {
			return Cookie{}, fmt.Errorf("drawing a cookie secret: %w", err)
		}
		var prev secret
		if cur.set && cur.epoch+1 == e {
			prev = cur
		}
		j.secrets = [2]secret{next, prev}
	}
	j.serial++
	var serial [serialLen]byte
	binary.BigEndian.PutUint64(serial[:], j.serial)
	return mac(j.secrets[0], c, serial), nil
}

// check reports whether cookie is one this jar minted for c in this epoch or the last,
// comparing in constant time.
func (j *jar) check(now time.Time, c claim, cookie Cookie) bool {
	e := j.epoch(now)
	serial := [serialLen]byte(cookie[:serialLen])
	ok := false
	for _, s := range j.secrets {
		if s.set && (s.epoch == e || s.epoch+1 == e) {
			want := mac(s, c, serial)
			ok = hmac.Equal(want[:], cookie[:]) || ok
		}
	}
	return ok
}

func mac(s secret, c claim, serial [serialLen]byte) Cookie {
	h := hmac.New(sha256.New, s.key[:])
	var b []byte
	b = wire.AppendStringField(b, c.from.String())
	b = wire.AppendStringField(b, c.nodeID)
	b = wire.AppendStringField(b, c.nodeEndpoint)
	b = wire.AppendStringField(b, c.raftEndpoint)
	b = wire.AppendStringField(b, c.cluster)
	b = wire.AppendField(b, serial[:])
	b = wire.AppendU64Field(b, s.epoch)
	h.Write(b)
	var out Cookie
	copy(out[:], serial[:])
	copy(out[serialLen:], h.Sum(nil))
	return out
}

// cookieTable counts per cookie (spent: 1; failed checks: how many), each entry kept
// only as long as its cookie could still be accepted; bounded, refusing when full.
type cookieTable struct {
	m         map[Cookie]cookieEntry
	lastPrune time.Time
}

type cookieEntry struct {
	n       int
	expires time.Time
}

func (t *cookieTable) count(c Cookie, now time.Time) int {
	e, ok := t.m[c]
	if !ok || !now.Before(e.expires) {
		return 0
	}
	return e.n
}

// room reports whether c can be counted: it already is, or there is space after the
// expired entries are dropped (at most once per pruneEvery).
func (t *cookieTable) room(c Cookie, now time.Time) bool {
	if _, ok := t.m[c]; ok || len(t.m) < maxCookies {
		return true
	}
	if now.Sub(t.lastPrune) >= pruneEvery {
		t.lastPrune = now
		for k, e := range t.m {
			if !now.Before(e.expires) {
				delete(t.m, k)
			}
		}
	}
	return len(t.m) < maxCookies
}

// add counts c once more, to be forgotten after ttl; the caller checked room.
func (t *cookieTable) add(c Cookie, now time.Time, ttl time.Duration) {
	if t.m == nil {
		t.m = map[Cookie]cookieEntry{}
	}
	e := t.m[c]
	if !now.Before(e.expires) {
		e = cookieEntry{}
	}
	t.m[c] = cookieEntry{n: e.n + 1, expires: now.Add(ttl)}
}
