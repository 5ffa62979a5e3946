// Package storetest holds test doubles for package store: a filesystem that injects faults
// and crash points (the pebble errorfs idea, reduced to what the store calls).
package storetest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// Op names one kind of filesystem call.
type Op string

// The operations FaultFS can fail.
const (
	OpMkdir   Op = "mkdir"
	OpCreate  Op = "create"
	OpRead    Op = "read"
	OpWrite   Op = "write"
	OpSync    Op = "sync"
	OpClose   Op = "close"
	OpRename  Op = "rename"
	OpRemove  Op = "remove"
	OpReadDir Op = "readdir"
	OpSyncDir Op = "syncdir"
)

// ErrCrashed is returned by every call after the crash point: the process is deemed dead, so
// nothing it does afterwards reaches the disk.
var ErrCrashed = errors.New("storetest: crashed")

// FaultFS wraps a store.FS. Faults are armed per operation kind; a crash point makes every
// call after the n-th mutating call fail, modelling a kill -9 between two system calls.
type FaultFS struct {
	Base store.FS

	mu         sync.Mutex
	faults     map[Op]fault
	holds      map[Op]hold
	mutations  int
	crashAfter int // -1: never
}

type hold struct {
	held    chan struct{}
	release chan struct{}
}

type fault struct {
	err   error
	times int // remaining; <0 = forever
}

// NewFaultFS wraps base (store.OSFS{} when nil).
func NewFaultFS(base store.FS) *FaultFS {
	if base == nil {
		base = store.OSFS{}
	}
	return &FaultFS{Base: base, faults: map[Op]fault{}, holds: map[Op]hold{}, crashAfter: -1}
}

// Hold makes the next call of op block until release is called. held is closed once that call
// is blocked, so a test can prove that other work proceeds while one file operation hangs.
func (f *FaultFS) Hold(op Op) (held <-chan struct{}, release func()) {
	h := hold{held: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	f.holds[op] = h
	f.mu.Unlock()
	var once sync.Once
	return h.held, func() { once.Do(func() { close(h.release) }) }
}

// Fail makes the next times calls of op fail with err (times < 0: every call).
func (f *FaultFS) Fail(op Op, err error, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = fault{err: err, times: times}
}

// Heal disarms every fault and the crash point.
func (f *FaultFS) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = map[Op]fault{}
	f.crashAfter = -1
}

// CrashAfter lets n more mutating calls (create, write, sync, close, rename, remove, mkdir,
// syncdir) through and fails everything after them with ErrCrashed.
func (f *FaultFS) CrashAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations = 0
	f.crashAfter = n
}

// Mutations counts mutating calls since the last CrashAfter (or since creation).
func (f *FaultFS) Mutations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mutations
}

// check is called before every operation; it blocks on a hold, then returns the injected
// error, if any.
func (f *FaultFS) check(op Op) error {
	f.mu.Lock()
	if h, ok := f.holds[op]; ok {
		delete(f.holds, op)
		f.mu.Unlock()
		close(h.held)
		<-h.release
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	if f.crashAfter >= 0 && f.mutations >= f.crashAfter {
		return fmt.Errorf("%s: %w", op, ErrCrashed)
	}
	if op != OpRead && op != OpReadDir {
		f.mutations++
	}
	if ft, ok := f.faults[op]; ok && ft.times != 0 {
		if ft.times > 0 {
			ft.times--
			f.faults[op] = ft
		}
		return ft.err
	}
	return nil
}
