package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/hostiletest"
)

// mix is how much of each hostile client runs at once; each is a fixed number of goroutines,
// so the load is bounded.
type mix struct{ violators, malformed, idle, slow int }

var defaultMix = mix{violators: 4, malformed: 4, idle: 400, slow: 100}

// attack runs the mix and counts what happened.
type attack struct {
	srv *server
	fix fixture
	mix mix

	violations, violationsAnswered atomic.Int64
	openings, openingsAnswered     atomic.Int64
	idleOpened, idleClosed         atomic.Int64 // idle keep-alives opened, and closed by the server
	slowHeads, slowCut             atomic.Int64
	slowHeldNanos                  atomic.Int64
	failures                       atomic.Int64 // attacks that could not even start (dial errors)
	firstFailure                   atomic.Value // its error text
}

// start launches the mix until ctx ends; wait returns once every goroutine has.
func (a *attack) start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	spawn := func(n int, f func(ctx context.Context, i int)) {
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); f(ctx, i) }()
		}
	}
	spawn(a.mix.violators, a.violate)
	spawn(a.mix.malformed, a.malformedOpenings)
	spawn(a.mix.idle, a.holdIdle)
	spawn(a.mix.slow, a.dripHead)
	return wg.Wait
}

// violate runs worker i+1's sessions one after another, each sending InitConnection again.
func (a *attack) violate(ctx context.Context, i int) {
	w := a.fix.workers[1+i%(len(a.fix.workers)-1)]
	for ctx.Err() == nil {
		o, err := hostiletest.Violate(ctx, a.srv.protoURL(), w.id, w.token)
		if ctx.Err() != nil {
			return
		}
		a.violations.Add(1)
		if err == nil && o.Error != nil && o.Error.Code == 400 && o.Close == 1000 {
			a.violationsAnswered.Add(1)
		} else if err != nil {
			pause(ctx, 100*time.Millisecond) // a 496 while the last session is released
		}
	}
}

// malformedOpenings cycles through the malformed first messages.
func (a *attack) malformedOpenings(ctx context.Context, i int) {
	cases := hostiletest.FirstMessages()
	for n := i; ctx.Err() == nil; n++ {
		fm := cases[n%len(cases)]
		o, err := fm.Run(ctx, a.srv.protoURL(), "")
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, hostiletest.ErrDial) {
			a.dialFailed(ctx, err)
			continue
		}
		a.openings.Add(1)
		if err == nil && fm.Check(o) == nil {
			a.openingsAnswered.Add(1)
		}
	}
}

// holdIdle keeps one idle keep-alive open from one of 8 addresses, reopening it whenever the
// server closes it.
func (a *attack) holdIdle(ctx context.Context, i int) {
	laddr := fmt.Sprintf("127.0.0.%d", 2+i%8)
	for ctx.Err() == nil {
		c, err := hostiletest.IdleKeepAlive(ctx, a.srv.addr, laddr, "/healthz")
		if err != nil {
			a.dialFailed(ctx, err)
			continue
		}
		a.idleOpened.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if _, closed := hostiletest.WaitClosed(c, time.Hour); closed && ctx.Err() == nil {
			a.idleClosed.Add(1)
		}
		stop()
		c.Close()
	}
}

// dripHead sends a request head one byte every 500 ms from one of 4 addresses, again and
// again.
func (a *attack) dripHead(ctx context.Context, i int) {
	laddr := fmt.Sprintf("127.0.0.%d", 10+i%4)
	for ctx.Err() == nil {
		held, cut, err := hostiletest.SlowHeader(ctx, a.srv.addr, laddr, 500*time.Millisecond)
		if err != nil {
			a.dialFailed(ctx, err)
			continue
		}
		a.slowHeads.Add(1)
		if cut {
			a.slowCut.Add(1)
			a.slowHeldNanos.Add(int64(held))
		}
	}
}

// dialFailed counts a connection the attacker could not open (or whose HTTP exchange broke
// before the attack began), keeps the first such error for the report, and backs off a little.
func (a *attack) dialFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if a.failures.Add(1) == 1 {
		a.firstFailure.Store(err.Error())
	}
	pause(ctx, 100*time.Millisecond)
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
