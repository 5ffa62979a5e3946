package tier

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// refusalLog reports an upstream's refusals (a wrong password, a value over its cap) at Warn
// at most once per interval, and at Debug in between: the operator must learn of a refusing
// upstream, but a build's every miss must not write a line.
type refusalLog struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration
	last  atomic.Int64 // unix nanoseconds of the last Warn; 0 = never
}

const refusalLogInterval = time.Minute

func (r *refusalLog) report(verb string, err error) {
	now := r.now().UnixNano()
	last := r.last.Load()
	level := slog.LevelDebug
	if (last == 0 || now-last >= int64(r.every)) && r.last.CompareAndSwap(last, now) {
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, "cache tier: the upstream refused; treating it as a miss", "verb", verb, "err", err)
}
