package narstore

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on; test with errors.Is.
var (
	// ErrNotFound: no object is stored under the hash.
	ErrNotFound = errors.New("narstore: object not found")
	// ErrBadHash: the store hash is not 32 characters of Nix base-32 (it names a file, so
	// nothing else is let near the file system).
	ErrBadHash = errors.New("narstore: invalid store hash")
	// ErrBusy: the key is already staged by a live Staged in this process.
	ErrBusy = errors.New("narstore: upload already staged")
	// ErrFinished: the Staged was committed, aborted or closed.
	ErrFinished = errors.New("narstore: staged upload is finished")
	// ErrNotContiguous: a write did not start where the staged bytes end. The error is an
	// *OffsetError.
	ErrNotContiguous = errors.New("narstore: write is not contiguous")
	// ErrVerify: Commit refused the bytes. The error is a *VerifyError.
	ErrVerify = errors.New("narstore: verification failed")
)

// OffsetError is a write at Got when the staged bytes end at Want.
type OffsetError struct {
	Got, Want int64
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("narstore: write at offset %d, staged bytes end at %d", e.Got, e.Want)
}

// Unwrap makes errors.Is(err, ErrNotContiguous) hold.
func (e *OffsetError) Unwrap() error { return ErrNotContiguous }

// Check names one of Commit's verification steps, in the order they run.
type Check uint8

const (
	CheckFileSize   Check = iota + 1 // compressed length != Expect.FileSize
	CheckFileHash                    // SHA-256 of the compressed bytes != Expect.FileHash
	CheckDecompress                  // not a valid zstd stream, or its window is over the cap
	CheckNarSize                     // decompressed length != Expect.NarSize (or passed it)
	CheckNarFormat                   // the output does not start with the NAR magic
	CheckNarHash                     // SHA-256 of the NAR != Expect.NarHash
)

var checkNames = [...]string{"", "file_size", "file_hash", "decompress", "nar_size", "nar_format", "nar_hash"}

// String is the check's metric-label form ("file_hash", "nar_size", ...).
func (c Check) String() string {
	if int(c) < len(checkNames) && c != 0 {
		return checkNames[c]
	}
	return fmt.Sprintf("check(%d)", uint8(c))
}

// VerifyError says which check refused a commit. Detail never holds peer bytes.
type VerifyError struct {
	Check  Check
	Detail string
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("narstore: %s check failed: %s", e.Check, e.Detail)
}

// Unwrap makes errors.Is(err, ErrVerify) hold.
func (e *VerifyError) Unwrap() error { return ErrVerify }

func verifyErr(c Check, format string, args ...any) error {
	return &VerifyError{Check: c, Detail: fmt.Sprintf(format, args...)}
}
