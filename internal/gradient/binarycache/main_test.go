package binarycache

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// TestMain runs the tests with the repository's own Nix configuration.
func TestMain(m *testing.M) { nixexectest.Main(m) }
