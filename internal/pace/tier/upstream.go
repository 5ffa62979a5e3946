package tier

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
)

// upstream is the shared cache a tier reads through to and offers stores to. Its errors come
// in the two kinds kvclient defines: an error wrapping kvclient.ErrUnavailable (could not
// connect, stalled, dropped) says the upstream is down; anything else (a wire.Refusal, a
// refused credential) is an answer, and an answer means it is up.
type upstream interface {
	// Fetch returns a fresh value the caller may keep.
	Fetch(ctx context.Context, key []byte) ([]byte, bool, error)
	// Store offers a canonical value; the upstream is not asked to canonicalize it again.
	Store(ctx context.Context, key, group, value []byte) error
	// Close aborts exchanges in flight and closes every connection.
	Close() error
}

// errUpstreamDown is the answer of an upstream remembered down: nothing was sent. It wraps
// kvclient.ErrUnavailable so it reads as "down" everywhere.
var errUpstreamDown = fmt.Errorf("%w: upstream remembered down", kvclient.ErrUnavailable)

// isDown reports whether err says the upstream could not be reached or the exchange broke.
func isDown(err error) bool { return errors.Is(err, kvclient.ErrUnavailable) }
