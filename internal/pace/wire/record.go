package wire

// Record is a nested record read with variable arity (pace-wire §1.4): the
// first N positions a reader knows, missing trailing positions left at
// "did not say", surplus positions ignored. A position that is said but
// empty is "absent"; accessors report both as not present, and Said tells
// them apart.
type Record struct {
	fields [][]byte
}

// ReadRecord reads the first known positions of the nested record b. The
// whole record must still be a well-formed field list: surplus positions
// are skipped, not trusted to be framed.
func ReadRecord(b []byte, known int) (Record, error) {
	total, err := CountFields(b)
	if err != nil {
		return Record{}, err
	}
	n := min(total, known)
	fields := make([][]byte, 0, n)
	rest := b
	for range n {
		var f []byte
		f, rest, _ = nextField(rest)
		fields = append(fields, f)
	}
	return Record{fields: fields}, nil
}

// AppendRecord appends a nested record of the given positions as one field.
func AppendRecord(dst []byte, positions ...[]byte) []byte {
	dst, mark := BeginField(dst)
	for _, p := range positions {
		dst = AppendField(dst, p)
	}
	return EndField(dst, mark)
}

// Len is the number of known positions the sender said.
func (r Record) Len() int { return len(r.fields) }

// Said reports whether the sender's record reached position i.
func (r Record) Said(i int) bool { return i >= 0 && i < len(r.fields) }

// Field returns position i; present is false when unsaid or empty.
func (r Record) Field(i int) (f []byte, present bool) {
	if !r.Said(i) {
		return nil, false
	}
	return r.fields[i], len(r.fields[i]) > 0
}

// U8 reads position i as an optional u8; a wrong width is still refused.
func (r Record) U8(i int) (v uint8, present bool, err error) {
	f, _ := r.Field(i)
	return OptU8(f)
}

// U32 reads position i as an optional u32; a wrong width is still refused.
func (r Record) U32(i int) (v uint32, present bool, err error) {
	f, _ := r.Field(i)
	return OptU32(f)
}

// U64 reads position i as an optional u64; a wrong width is still refused.
func (r Record) U64(i int) (v uint64, present bool, err error) {
	f, _ := r.Field(i)
	return OptU64(f)
}

// Nested reads position i as a nested record of known positions; an
// unsaid or empty position is an empty record.
func (r Record) Nested(i, known int) (Record, error) {
	f, _ := r.Field(i)
	return ReadRecord(f, known)
}

// SplitList splits a nested list (a field whose bytes are a field list of
// homogeneous entries) into at most maxEntries entries, appended to dst[:0].
// More entries than maxEntries is ErrTooManyEntries; nothing is allocated
// beyond min(maxEntries, len(b)/FieldPrefixLen) entries.
func SplitList(dst [][]byte, b []byte, maxEntries int) ([][]byte, error) {
	total, err := CountFields(b)
	if err != nil {
		return dst[:0], err
	}
	if total > maxEntries {
		return dst[:0], ErrTooManyEntries
	}
	return SplitFields(dst, b, total)
}

// AppendList appends a nested list of entries as one field.
func AppendList(dst []byte, entries ...[]byte) []byte {
	return AppendRecord(dst, entries...)
}

// BoundCount bounds a count a peer claims before entries it precedes: the
// entries cannot outnumber remaining/minEntrySize, nor the local cap.
// Only a count passing both may size an allocation.
func BoundCount(claimed uint64, remaining, minEntrySize, localCap int) (int, error) {
	if minEntrySize < 1 {
		minEntrySize = 1
	}
	if claimed > uint64(localCap) {
		return 0, ErrTooManyEntries
	}
	if claimed > uint64(remaining/minEntrySize) {
		return 0, malformed("%d entries claimed in %d bytes", claimed, remaining)
	}
	return int(claimed), nil
}
