package verbs

// Opt is an optional integer: on the wire an absent value is an empty
// field and zero is a real zero of the full width (pace-wire §1.4), so the two
// stay distinct here too.
type Opt[T ~uint8 | ~uint32 | ~uint64] struct {
	Value   T
	Present bool
}

// Some is a present value.
func Some[T ~uint8 | ~uint32 | ~uint64](v T) Opt[T] { return Opt[T]{Value: v, Present: true} }

// Get returns the value and whether it is present.
func (o Opt[T]) Get() (T, bool) { return o.Value, o.Present }
