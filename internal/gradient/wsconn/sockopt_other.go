//go:build !linux

package wsconn

import "time"

// setDialSocketOptions: TCP_USER_TIMEOUT is Linux-only; Nagle is turned off after the dial
// (Go's default, made explicit in tuneTCP).
func setDialSocketOptions(uintptr, time.Duration) error { return nil }
