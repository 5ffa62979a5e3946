package cacheserve

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLease is how long an upload may make no progress before it loses its slot; its
// partial is then stale for narstore.SweepPartials too.
const DefaultLease = 300 * time.Second

// AdmissionConfig holds the upload limits of gradient-protocol §7.3. Zero fields take the
// defaults.
type AdmissionConfig struct {
	LargeSlots int           // upload.concurrency: uploads over SmallMax at once (8)
	SmallSlots int           // small uploads at once (128)
	SmallMax   uint64        // the largest declared size that counts as small (1 MiB)
	ByteBudget uint64        // upload.bytesBudget: declared bytes admitted at once (8 GiB)
	Lease      time.Duration // an upload without progress for this long loses its slot (300 s)
	Now        func() time.Time
}

func (c AdmissionConfig) withDefaults() AdmissionConfig {
	if c.LargeSlots <= 0 {
		c.LargeSlots = 8
	}
	if c.SmallSlots <= 0 {
		c.SmallSlots = 128
	}
	if c.SmallMax == 0 {
		c.SmallMax = 1 << 20
	}
	if c.ByteBudget == 0 {
		c.ByteBudget = 8 << 30
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Admission is the server-wide upload admission, shared by every session. It is safe for
// concurrent use.
type Admission struct {
	cfg AdmissionConfig

	mu     sync.Mutex
	large  int
	small  int
	bytes  uint64
	byPath map[string]*Lease // store hash → the upload holding it
}

// NewAdmission returns an empty admission with cfg's limits.
func NewAdmission(cfg AdmissionConfig) *Admission {
	return &Admission{cfg: cfg.withDefaults(), byPath: make(map[string]*Lease)}
}

// Lease is one admitted upload. Touch it on progress, Pin it while committing, Release it
// when the upload ends.
type Lease struct {
	a         *Admission
	storeHash string
	size      uint64
	large     bool
	onExpire  func()
	last      atomic.Int64 // UnixNano of the last progress
	pinned    bool         // guarded by a.mu
	released  bool         // guarded by a.mu
}

// Acquire admits an upload of storeHash with the declared size. It fails with
// ErrInProgress when another upload holds the path and with an error wrapping ErrFull when
// a limit is reached. Leases idle past the lease time are reclaimed first: their onExpire
// runs (outside any lock) after they lost their slot.
func (a *Admission) Acquire(storeHash string, size uint64, onExpire func()) (*Lease, error) {
	a.mu.Lock()
	expired := a.collectExpired()
	l, err := a.admit(storeHash, size, onExpire)
	a.mu.Unlock()
	notifyExpired(expired)
	return l, err
}

// Fits reports whether an upload of size could ever be admitted (it is within the budget).
func (a *Admission) Fits(size uint64) bool { return size <= a.cfg.ByteBudget }

func (a *Admission) admit(storeHash string, size uint64, onExpire func()) (*Lease, error) {
	if _, busy := a.byPath[storeHash]; busy {
		return nil, ErrInProgress
	}
	large := size > a.cfg.SmallMax
	switch {
	case large && a.large >= a.cfg.LargeSlots:
		return nil, fmt.Errorf("%w: %d large uploads in progress", ErrFull, a.large)
	case !large && a.small >= a.cfg.SmallSlots:
		return nil, fmt.Errorf("%w: %d small uploads in progress", ErrFull, a.small)
	case a.bytes+size > a.cfg.ByteBudget:
		return nil, fmt.Errorf("%w: %d of %d budget bytes admitted", ErrFull, a.bytes, a.cfg.ByteBudget)
	}
	l := &Lease{a: a, storeHash: storeHash, size: size, large: large, onExpire: onExpire}
	l.last.Store(a.cfg.Now().UnixNano())
	if large {
		a.large++
	} else {
		a.small++
	}
	a.bytes += size
	a.byPath[storeHash] = l
	return l, nil
}

// Sweep reclaims every expired lease and returns how many; the server may call it
// periodically so abandoned uploads free their slots before the next Acquire.
func (a *Admission) Sweep() int {
	a.mu.Lock()
	expired := a.collectExpired()
	a.mu.Unlock()
	notifyExpired(expired)
	return len(expired)
}

// InProgress reports whether an upload of storeHash holds a lease.
func (a *Admission) InProgress(storeHash string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.byPath[storeHash]
	return ok
}

// Usage is the admitted large and small uploads and declared bytes.
func (a *Admission) Usage() (large, small int, bytes uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.large, a.small, a.bytes
}

// collectExpired releases the leases idle past the lease time; a.mu is held.
func (a *Admission) collectExpired() []*Lease {
	cutoff := a.cfg.Now().Add(-a.cfg.Lease).UnixNano()
	var out []*Lease
	for _, l := range a.byPath {
		if !l.pinned && l.last.Load() < cutoff {
			a.releaseLocked(l)
			out = append(out, l)
		}
	}
	return out
}

func notifyExpired(ls []*Lease) {
	for _, l := range ls {
		if l.onExpire != nil {
			l.onExpire()
		}
	}
}

func (a *Admission) releaseLocked(l *Lease) {
	if l.released {
		return
	}
	l.released = true
	if l.large {
		a.large--
	} else {
		a.small--
	}
	a.bytes -= l.size
	if a.byPath[l.storeHash] == l {
		delete(a.byPath, l.storeHash)
	}
}

// Touch records progress, restarting the lease.
func (l *Lease) Touch() { l.last.Store(l.a.cfg.Now().UnixNano()) }

// Pin keeps the lease from expiring (a commit is running) and reports whether it was
// still held: false means it already expired.
func (l *Lease) Pin() bool {
	l.a.mu.Lock()
	defer l.a.mu.Unlock()
	l.pinned = true
	return !l.released
}

// Release gives the slot, the bytes and the path back. Releasing twice is harmless.
func (l *Lease) Release() {
	l.a.mu.Lock()
	defer l.a.mu.Unlock()
	l.a.releaseLocked(l)
}
