package cacheverbs

import (
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/value"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Failure classifies an error of this package, so each server counts it under its own names.
type Failure uint8

// Failures, one per refusal code a cache verb answers.
const (
	FailureNone              Failure = iota
	FailureMalformedFrame            // malformed-frame: an invalid key or a misshapen request
	FailureNotAValue                 // malformed-value
	FailureForeignGeneration         // foreign-value-generation
	FailureStorageWrite              // storage-write-failed
)

// Classify names the failure err reports; nil is FailureNone. Any other error from ParseStore
// is a value that could not be taken as a compile-value (FailureNotAValue).
func Classify(err error) Failure {
	switch {
	case err == nil:
		return FailureNone
	case errors.Is(err, ErrStorageWrite):
		return FailureStorageWrite
	case errors.Is(err, store.ErrInvalidKey), errors.Is(err, ErrMalformedRequest):
		return FailureMalformedFrame
	case errors.Is(err, value.ErrForeignGeneration):
		return FailureForeignGeneration
	}
	return FailureNotAValue
}

// Refusal is the answer to a non-nil err of this package. A storage failure carries the code's default sentence, never
// the error itself: it names paths on the server's disk.
func Refusal(err error) wire.Refusal {
	switch Classify(err) {
	case FailureStorageWrite:
		return wire.Refusal{Code: wire.CodeStorageWriteFailed}
	case FailureMalformedFrame:
		return wire.Refusal{Code: wire.CodeMalformedFrame, Message: err.Error()}
	case FailureForeignGeneration:
		return wire.Refusal{Code: wire.CodeForeignValueGeneration, Message: err.Error()}
	}
	return wire.Refusal{Code: wire.CodeMalformedValue, Message: err.Error()}
}
