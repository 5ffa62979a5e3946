package lease

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func spentID(n int) [32]byte {
	var id [32]byte
	id[0], id[1], id[2] = byte(n), byte(n>>8), byte(n>>16)
	return id
}

func TestSpentSetKeepsAnIDUntilItsWindowCloses(t *testing.T) {
	s := NewSpentSet(4)
	keep := testNow.Add(time.Minute)
	if err := s.Spend(spentID(1), keep, testNow); err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(spentID(1), keep, keep); !errors.Is(err, ErrAlreadySpent) {
		t.Fatalf("at keepUntil itself: got %v, want ErrAlreadySpent", err)
	}
	if err := s.Spend(spentID(1), keep, keep.Add(time.Nanosecond)); err != nil {
		t.Fatalf("after keepUntil the id is forgotten and spendable: %v", err)
	}
}

func TestSpentSetReplayWinsOverFull(t *testing.T) {
	s := NewSpentSet(1)
	keep := testNow.Add(time.Minute)
	if err := s.Spend(spentID(1), keep, testNow); err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(spentID(1), keep, testNow); !errors.Is(err, ErrAlreadySpent) {
		t.Fatalf("replay into a full set: got %v, want ErrAlreadySpent", err)
	}
	if err := s.Spend(spentID(2), keep, testNow); !errors.Is(err, ErrSpentSetFull) {
		t.Fatalf("new id into a full set: got %v, want ErrSpentSetFull", err)
	}
}

func TestSpentSetPrunesInExpiryOrder(t *testing.T) {
	s := NewSpentSet(0)
	for i := 0; i < 100; i++ {
		// Insert out of order: keepUntil = now + (i*37 mod 100) seconds.
		if err := s.Spend(spentID(i), testNow.Add(time.Duration(i*37%100)*time.Second), testNow); err != nil {
			t.Fatal(err)
		}
	}
	// At now+49.5s, the 50 ids kept until 0..49 s are gone.
	if err := s.Spend(spentID(1000), testNow.Add(time.Hour), testNow.Add(49500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if got := s.Len(); got != 51 {
		t.Fatalf("after pruning: %d ids, want 51", got)
	}
	if s.Capacity() != DefaultSpentCapacity {
		t.Fatalf("capacity %d, want the default", s.Capacity())
	}
}

func TestSpentSetFarFutureDoesNotWrap(t *testing.T) {
	s := NewSpentSet(2)
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Spend(spentID(1), far, testNow); err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(spentID(1), far, testNow.Add(100*365*24*time.Hour)); !errors.Is(err, ErrAlreadySpent) {
		t.Fatalf("an id kept past 2262 was pruned early: %v", err)
	}
}

func TestSpentSetConcurrentSpendsOfOneIDSucceedOnce(t *testing.T) {
	s := NewSpentSet(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	successes := 0
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if s.Spend(spentID(i), testNow.Add(time.Minute), testNow) == nil {
					mu.Lock()
					successes++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if successes != 200 {
		t.Fatalf("%d successful spends of 200 ids by 16 goroutines, want exactly 200", successes)
	}
}
