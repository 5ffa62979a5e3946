//go:build !linux

package pgtest

import (
	"errors"
	"syscall"
)

// childAttr: outside Linux the server runs as ourselves, without a death signal.
func childAttr(*syscall.Credential) *syscall.SysProcAttr { return nil }

func lookupCredential(string) (*syscall.Credential, error) {
	return nil, errors.New("running the test server as another user is supported on Linux only")
}
