package wire

// Option is the wire's opt<T>: one tag byte (0 None, 1 Some) and, when Valid, the value.
// A value type rather than a pointer so that decoding optional fields allocates nothing.
type Option[T any] struct {
	Value T
	Valid bool
}

// Some returns a present Option holding v.
func Some[T any](v T) Option[T] { return Option[T]{Value: v, Valid: true} }

// None returns an absent Option.
func None[T any]() Option[T] { return Option[T]{} }

// Get returns the value and whether it is present.
func (o Option[T]) Get() (T, bool) { return o.Value, o.Valid }

// isOption marks Option types for the plan compiler.
func (Option[T]) isOption() {}

type optionMarker interface{ isOption() }

// tupleMarker marks a struct that the wire describes as a tuple "(A,B)" instead of "{A,B}".
// The bytes are the same; only the schema text differs.
type tupleMarker interface{ isTuple() }
