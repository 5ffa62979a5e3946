// Package clocktest is pace's one fake clock for tests: an injected Now that moves only when
// the test says so, safe to read from the goroutines under test while the test moves it.
// Code under test takes a func() time.Time (or an interface with Now); tests pass Clock.Now.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a manual clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New is a clock standing at start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
