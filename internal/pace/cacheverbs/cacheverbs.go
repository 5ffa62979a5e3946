package cacheverbs

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/store"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// Storage is what the verbs need from a store; *store.Store satisfies it.
type Storage interface {
	Get(key []byte) ([]byte, error)
	Put(key, value []byte) error
	Delete(key []byte) (bool, error)
}

var _ Storage = (*store.Store)(nil)

var (
	// ErrStorageWrite wraps every failure of the storage to write or delete; it is answered
	// storage-write-failed.
	ErrStorageWrite = errors.New("storage write failed")
	// ErrMalformedRequest is a request whose fields do not have the verb's shape; it is
	// answered malformed-frame, like an invalid key.
	ErrMalformedRequest = errors.New("malformed cache request")
)

// STORE's fields, in wire order (pace-wire §1.13).
const (
	storeKey = iota
	storeGroup
	storeSrcRoot
	storeBuildTree
	storeValue
	storeArity
)

// StoreRequest is a STORE that passed every check: its value is in canonical form.
type StoreRequest struct {
	Key           []byte
	PrefetchGroup []byte
	// Value is the canonical compile-value: the payload itself when no path changed, otherwise
	// a fresh encoding.
	Value []byte
}

// ParseStore checks STORE's five fields (key, prefetchGroup, srcRoot, buildTree, value) and
// canonicalizes the value's text regions with the producer's roots. The result aliases fields.
// Errors wrap ErrMalformedRequest, store.ErrInvalidKey, value.ErrForeignGeneration or
// value.ErrNotAValue.
func ParseStore(fields [][]byte) (StoreRequest, error) {
	if len(fields) != storeArity {
		return StoreRequest{}, fmt.Errorf("STORE has %d fields, want %d: %w", len(fields), storeArity, ErrMalformedRequest)
	}
	key := fields[storeKey]
	if err := store.CheckKey(key); err != nil {
		return StoreRequest{}, err
	}
	roots := value.Roots{SrcRoot: string(fields[storeSrcRoot]), BuildTree: string(fields[storeBuildTree])}
	canonical, err := value.CanonicalizeEncoded(fields[storeValue], roots)
	if err != nil {
		return StoreRequest{}, err
	}
	return StoreRequest{Key: key, PrefetchGroup: fields[storeGroup], Value: canonical}, nil
}

// Put writes a checked STORE. The storage keeps r.Value: the caller must not reuse it. Errors
// wrap ErrStorageWrite.
func Put(st Storage, r StoreRequest) error {
	if err := st.Put(r.Key, r.Value); err != nil {
		return fmt.Errorf("%w: %w", ErrStorageWrite, err)
	}
	return nil
}

// Fetch looks key up. A value that is absent, unreadable or of a foreign generation is a miss:
// an older build's value is simply not one we can serve. The only error is an invalid key
// (wrapping store.ErrInvalidKey). The value is shared with the storage: do not modify it.
func Fetch(st Storage, key []byte) ([]byte, bool, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, false, err
	}
	v, err := st.Get(key)
	if err != nil || !value.HasCurrentGeneration(v) {
		return nil, false, nil
	}
	return v, true, nil
}

// Drop removes key from st and reports whether it was there. Errors wrap store.ErrInvalidKey
// or ErrStorageWrite.
func Drop(st Storage, key []byte) (bool, error) {
	if err := store.CheckKey(key); err != nil {
		return false, err
	}
	present, err := st.Delete(key)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrStorageWrite, err)
	}
	return present, nil
}
