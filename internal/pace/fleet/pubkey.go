package fleet

import (
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
)

// ErrMalformedKey reports a public key the cluster must not record: not 32
// bytes, a non-canonical encoding, not a point on the curve, or a point of
// small order (pace-consensus §7.5). Such a key could verify forged signatures or
// collide with another encoding of the same point.
var ErrMalformedKey = errors.New("malformed public key")

// CheckPublicKey refuses a key edkey.Validate refuses. It is slow (big-integer arithmetic) and
// meant for admission time, never for the request path.
func CheckPublicKey(key []byte) error {
	if err := edkey.Validate(key); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedKey, err)
	}
	return nil
}
