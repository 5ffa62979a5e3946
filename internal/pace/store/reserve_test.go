package store

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// gatedFS blocks the first blob CreateTemp (not the FORMAT file's) until the gate opens.
type gatedFS struct {
	OSFS
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFS) CreateTemp(dir, pattern string) (File, error) {
	if pattern == tempPrefix+"*" {
		g.once.Do(func() { close(g.entered); <-g.gate })
	}
	return g.OSFS.CreateTemp(dir, pattern)
}

func (d *diskTier) waiters() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting
}

// openGated opens a store whose budget fits one 1000-byte blob, with the first write held.
func openGated(t *testing.T) (*Store, *gatedFS) {
	g := &gatedFS{entered: make(chan struct{}), gate: make(chan struct{})}
	s, err := Open(Options{Dir: t.TempDir(), MaxDisk: 1000, FS: g, Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

// The tests below run in a synctest bubble: synctest.Wait returns once every goroutine of the
// test is blocked (the first Put on the gate, the second in the budget's wait), so no test polls.

func TestPutWaitsWhileTheBudgetIsAllReserved(t *testing.T) {
	synctest.Test(t, testPutWaitsWhileTheBudgetIsAllReserved)
}

func testPutWaitsWhileTheBudgetIsAllReserved(t *testing.T) {
	s, g := openGated(t)
	defer s.Close()
	first := make(chan error, 1)
	go func() { first <- s.Put([]byte("a"), make([]byte, 1000-blobOverhead-1)) }()
	<-g.entered
	second := make(chan error, 1)
	go func() { second <- s.Put([]byte("b"), make([]byte, 1000-blobOverhead-1)) }()
	synctest.Wait()
	if n := s.disk.waiters(); n != 1 {
		t.Fatalf("%d Puts waiting for budget, want 1", n)
	}
	if st := s.Stats(); st.Reserved != 1000 || st.Disk.Bytes != 0 {
		t.Fatalf("while waiting: reserved %d, used %d", st.Reserved, st.Disk.Bytes)
	}
	close(g.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the waiting Put: %v", err)
	}
	st := s.Stats()
	if st.Disk.Bytes != 1000 || st.Reserved != 0 || st.Disk.Evictions != 1 {
		t.Fatalf("after both: %+v", st)
	}
	if _, err := s.Get([]byte("b")); err != nil {
		t.Fatalf("the later Put's value: %v", err)
	}
}

func TestCloseReleasesPutsWaitingForBudget(t *testing.T) {
	synctest.Test(t, testCloseReleasesPutsWaitingForBudget)
}

func testCloseReleasesPutsWaitingForBudget(t *testing.T) {
	s, g := openGated(t)
	first := make(chan error, 1)
	go func() { first <- s.Put([]byte("a"), make([]byte, 1000-blobOverhead-1)) }()
	<-g.entered
	second := make(chan error, 1)
	go func() { second <- s.Put([]byte("b"), make([]byte, 1000-blobOverhead-1)) }()
	synctest.Wait()
	if n := s.disk.waiters(); n != 1 {
		t.Fatalf("%d Puts waiting for budget, want 1", n)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	if err := <-second; !errors.Is(err, ErrClosed) {
		t.Fatalf("the waiting Put after Close: %v, want ErrClosed", err)
	}
	close(g.gate) // Close waits for the write in flight, which then completes
	if err := <-first; err != nil {
		t.Fatalf("the Put in flight during Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
