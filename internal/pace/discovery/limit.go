package discovery

import (
	"net/netip"
	"time"
)

// Bounds of the anti-abuse tables (pace-node §9.1: every table is bounded).
const (
	maxSources      = 4096 // per-source answer buckets
	maxHosts        = 1024 // per-host answer and check buckets
	maxCookies      = 4096 // spent cookies, and cookies with failed checks
	maxLogKeys      = 256  // ids and hosts logged within the last minute
	pruneEvery      = time.Second
	logAtMostEvery  = time.Minute
	staleIntervals  = 4 // a node unheard for this many rounds may be evicted
	globalBucketKey = 0
)

type bucket struct {
	tokens float64
	at     time.Time
}

// limiter is a table of token buckets, one per key, bounded: a key with no bucket starts
// full, so a bucket that has refilled is the same as none and may be pruned to make room.
type limiter[K comparable] struct {
	rate      Rate
	max       int
	m         map[K]bucket
	lastPrune time.Time
}

func newLimiter[K comparable](r Rate, max int) *limiter[K] {
	return &limiter[K]{rate: r, max: max, m: map[K]bucket{}}
}

// allow takes one token from k's bucket: false when it is empty, or when k has none and
// the table is full of buckets still refilling (refuse rather than forget a debt).
func (l *limiter[K]) allow(k K, now time.Time) bool {
	b, ok := l.m[k]
	if !ok {
		if len(l.m) >= l.max && !l.prune(now) {
			return false
		}
		b = bucket{tokens: float64(l.rate.Burst), at: now}
	}
	b = l.refill(b, now)
	if b.tokens < 1 {
		l.m[k] = b
		return false
	}
	b.tokens--
	l.m[k] = b
	return true
}

func (l *limiter[K]) refill(b bucket, now time.Time) bucket {
	if now.After(b.at) {
		b.tokens = min(float64(l.rate.Burst), b.tokens+float64(now.Sub(b.at))/float64(l.rate.Every))
		b.at = now
	}
	return b
}

// prune drops the buckets that have refilled, at most once per pruneEvery so that a flood
// from new sources cannot make every datagram scan the table; it reports whether there is
// room.
func (l *limiter[K]) prune(now time.Time) bool {
	if now.Sub(l.lastPrune) >= pruneEvery {
		l.lastPrune = now
		for k, b := range l.m {
			if l.refill(b, now).tokens >= float64(l.rate.Burst) {
				delete(l.m, k)
			}
		}
	}
	return len(l.m) < l.max
}

// guard holds the budgets: answers (challenges and proofs sent) per source address, per
// host and in all; signature checks per host and in all.
type guard struct {
	replySource *limiter[netip.AddrPort]
	replyHost   *limiter[netip.Addr]
	replyAll    *limiter[int]
	checkHost   *limiter[netip.Addr]
	checkAll    *limiter[int]
}

func newGuard(l Limits) *guard {
	return &guard{
		replySource: newLimiter[netip.AddrPort](l.RepliesPerSource, maxSources),
		replyHost:   newLimiter[netip.Addr](l.RepliesPerHost, maxHosts),
		replyAll:    newLimiter[int](l.RepliesGlobal, 1),
		checkHost:   newLimiter[netip.Addr](l.ChecksPerHost, maxHosts),
		checkAll:    newLimiter[int](l.ChecksGlobal, 1),
	}
}

func (g *guard) reply(from netip.AddrPort, now time.Time) bool {
	return g.replySource.allow(from, now) && g.replyHost.allow(from.Addr(), now) && g.replyAll.allow(globalBucketKey, now)
}

func (g *guard) check(from netip.AddrPort, now time.Time) bool {
	return g.checkHost.allow(from.Addr(), now) && g.checkAll.allow(globalBucketKey, now)
}

// recentLog remembers what was logged in the last minute, so a repeated refusal is logged
// at most once a minute per key; bounded, and silent when full.
type recentLog struct {
	m         map[string]time.Time
	lastPrune time.Time
}

func (r *recentLog) due(key string, now time.Time) bool {
	if at, ok := r.m[key]; ok && now.Sub(at) < logAtMostEvery {
		return false
	}
	if r.m == nil {
		r.m = map[string]time.Time{}
	}
	if _, ok := r.m[key]; !ok && len(r.m) >= maxLogKeys {
		if now.Sub(r.lastPrune) < pruneEvery {
			return false
		}
		r.lastPrune = now
		for k, at := range r.m {
			if now.Sub(at) >= logAtMostEvery {
				delete(r.m, k)
			}
		}
		if len(r.m) >= maxLogKeys {
			return false
		}
	}
	r.m[key] = now
	return true
}
