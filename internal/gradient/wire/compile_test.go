package wire

import (
	"reflect"
	"strings"
	"testing"
)

type (
	badUnregisteredKind uint8
	badInterface        interface{ isBad() }
	badUnexported       struct {
		//lint:ignore U1000 the field exists only for the codec to refuse it
		hidden string
	}
	badInt       struct{ N int }
	badRecursive struct{ Next []badRecursive }
	badTag       struct {
		X uint32 `proto:"default"`
	}
)

// Definitions the codec cannot put on the wire faithfully are refused when the plan is built,
// never encoded in some guessed way.
func TestCompileRefusesUnfaithfulDefinitions(t *testing.T) {
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[badUnregisteredKind](), "not a registered unit enum"},
		{reflect.TypeFor[badInterface](), "has no variant registry"},
		{reflect.TypeFor[badUnexported](), "unexported"},
		{reflect.TypeFor[badInt](), "unsupported type int"},
		{reflect.TypeFor[badRecursive](), "recursive"},
		{reflect.TypeFor[badTag](), "default needs since"},
	}
	for _, tc := range tests {
		t.Run(tc.typ.String(), func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want it to mention %q", msg, tc.want)
				}
			}()
			newCompiler(nil).node(tc.typ)
		})
	}
}
