package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// versioned builds a self-describing value: key, version, then bytes derived from both, so a
// reader can check that whatever it got is one whole value some writer stored for that key.
func versioned(key string, version, size int) []byte {
	head := fmt.Sprintf("%s#%d#", key, version)
	return append([]byte(head), valueFor(head, size)...)
}

func checkVersioned(key string, v []byte) error {
	prefix := []byte(key + "#")
	if !bytes.HasPrefix(v, prefix) {
		return fmt.Errorf("value of %q starts %q", key, v[:min(len(v), 20)])
	}
	rest := v[len(prefix):]
	i := bytes.IndexByte(rest, '#')
	if i < 0 {
		return fmt.Errorf("value of %q has no version", key)
	}
	head := string(v[:len(prefix)+i+1])
	if !bytes.Equal(v[len(head):], valueFor(head, len(v)-len(head))) {
		return fmt.Errorf("value of %q (%s) is torn", key, head)
	}
	return nil
}

// raceOnKeys is one worker: 300 random Puts, Gets and Deletes, checking every hit.
func raceOnKeys(t *testing.T, s *store.Store, keys []string, w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	for i := range 300 {
		key := keys[rng.IntN(len(keys))]
		var err error
		switch op := rng.IntN(10); {
		case op < 4:
			err = s.Put([]byte(key), versioned(key, w*1000+i, rng.IntN(40<<10)))
		case op < 9:
			var v []byte
			if v, err = s.Get([]byte(key)); err == nil {
				err = checkVersioned(key, v)
			} else if errors.Is(err, store.ErrNotFound) {
				err = nil
			}
		default:
			_, err = s.Delete([]byte(key))
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// TestConcurrentOperationsOnSharedKeysStayConsistent races Puts, Gets and Deletes of a few
// keys through both tiers with budgets small enough to evict constantly. Every hit must be a
// whole value of its key, and the accounting must match the files when the dust settles.
func TestConcurrentOperationsOnSharedKeysStayConsistent(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxDisk: 200 << 10, MaxMemory: 64 << 10, Sync: store.SyncNever})
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() { raceOnKeys(t, s, keys, w) })
	}
	wg.Wait()
	st := s.Stats()
	blobs, onDisk, temps := walkStore(t, dir)
	if int64(blobs) != st.Disk.Items || onDisk != st.Disk.Bytes || len(temps) != 0 || st.Reserved != 0 {
		t.Fatalf("index %d items/%d bytes/%d reserved; disk %d blobs/%d bytes/%d temps", st.Disk.Items, st.Disk.Bytes, st.Reserved, blobs, onDisk, len(temps))
	}
	if st.Disk.Bytes > 200<<10 || st.Memory.Bytes > 64<<10 || st.CorruptRemoved != 0 {
		t.Fatalf("budgets or integrity broken: %+v", st)
	}
	served := map[string][]byte{} // what the tiers answer now, memory first
	for _, key := range keys {
		if v, err := s.Get([]byte(key)); err == nil {
			if err := checkVersioned(key, v); err != nil {
				t.Fatal(err)
			}
			served[key] = v
		}
	}
	_ = s.Close()
	disk := openStore(t, store.Options{Dir: dir})
	for key, v := range served { // memory never answers with a value older than the disk's
		if onDisk, err := disk.Get([]byte(key)); err == nil && !bytes.Equal(onDisk, v) {
			t.Fatalf("%s: served %q, disk holds %q", key, v[:12], onDisk[:12])
		}
	}
}
