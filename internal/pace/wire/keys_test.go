package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckCacheKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		{strings.Repeat("ab", 32), true},
		{"k", true},
		{"", false},
		{"\x01group", false},
		{"\x02group", false},
		{"\x03fine", true},
		{strings.Repeat("k", MaxCacheKeyLen), true},
		{strings.Repeat("k", MaxCacheKeyLen+1), false},
	}
	for _, tt := range tests {
		err := CheckCacheKey([]byte(tt.key))
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrMalformedFrame)) {
			t.Errorf("CheckCacheKey(%.10q…) = %v, want ok=%v", tt.key, err, tt.ok)
		}
	}
}
