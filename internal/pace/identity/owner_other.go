//go:build !unix

package identity

import (
	"errors"
	"os"
)

// The state directory's protections are checked through POSIX owners and
// modes; pace-node builds for unix only (Windows ACLs are not implemented).
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("state files are supported on unix only")
}

func processEUID() int { return -1 }

func lockDir(string) (func(), error) {
	return nil, errors.New("state files are supported on unix only")
}
