package narstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Usage is the bytes and count of the stored objects, for the disk cap (gradient-server §15).
// It reads the directory, so callers measure now and then and keep a running estimate.
func (s *Store) Usage() (bytes int64, objects int, err error) {
	entries, err := os.ReadDir(s.objects)
	if err != nil {
		return 0, 0, fmt.Errorf("narstore: usage: %w", err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) { // removed since the listing
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("narstore: usage: %w", err)
		}
		if info.Mode().IsRegular() {
			bytes += info.Size()
			objects++
		}
	}
	return bytes, objects, nil
}
