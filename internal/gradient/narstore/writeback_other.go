//go:build !linux

package narstore

import "os"

// startWriteback is a no-op where sync_file_range does not exist; fsync does it all.
func startWriteback(*os.File, int64, int64) {}
