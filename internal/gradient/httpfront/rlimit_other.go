//go:build !unix

package httpfront

func openFileLimit() (uint64, bool) { return 0, false }
