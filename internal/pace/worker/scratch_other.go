//go:build !unix

package worker

import "os"

func ownedByMe(os.FileInfo) bool { return true }

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// lockExclusive: without flock, an exclusively opened lock would need
// platform code this build does not have yet; the root is used unlocked.
func lockExclusive(*os.File) error { return nil }
