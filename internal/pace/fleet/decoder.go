package fleet

import (
	"crypto/ed25519"
	"fmt"
	"slices"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// decoder reads fields and keeps the first error, so a record's decoder
// reads straight through and reports once.
type decoder struct {
	first error
}

func (d *decoder) fail(err error) {
	if d.first == nil {
		d.first = err
	}
}

func (d *decoder) text(f []byte, maxLen int) string {
	s, err := wire.Text(f, maxLen)
	if err != nil {
		d.fail(err)
	}
	return s
}

func (d *decoder) bounded(f []byte, maxLen int) []byte {
	b, err := wire.Bounded(f, maxLen)
	if err != nil {
		d.fail(err)
	}
	return b
}

func (d *decoder) u8(f []byte) uint8 {
	v, err := wire.U8(f)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *decoder) u64(f []byte) uint64 {
	v, err := wire.U64(f)
	if err != nil {
		d.fail(err)
	}
	return v
}

// key reads a 32-byte key; optional allows the empty field (absent, nil).
// The result is a copy, never an alias of the input.
func (d *decoder) key(f []byte, optional bool) ed25519.PublicKey {
	if optional && len(f) == 0 {
		return nil
	}
	k, err := wire.Exact(f, ed25519.PublicKeySize)
	if err != nil {
		d.fail(err)
		return nil
	}
	return slices.Clone(k)
}

func (d *decoder) err(what string) error {
	if d.first == nil {
		return nil
	}
	return fmt.Errorf("%w: %s: %v", ErrMalformed, what, d.first)
}
