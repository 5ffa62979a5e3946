package relational

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DB is what a backend provides: transactions on its driver. SQL text uses $1-style
// placeholders; a backend whose driver spells them differently rewrites them.
type DB interface {
	// Read runs fn in a read-only transaction with one consistent snapshot.
	Read(ctx context.Context, fn func(Tx) error) error
	// Write runs fn in a serializable write transaction. When the database reports a
	// serialization failure or deadlock, it rolls back and runs fn again (so fn must not
	// keep state from an earlier run).
	Write(ctx context.Context, fn func(Tx) error) error
	// IsUniqueViolation reports whether err is a unique-constraint violation.
	IsUniqueViolation(err error) bool
	Close() error
}

// Tx is one transaction's statements.
type Tx interface {
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow scans the first row; Scan returns ErrNoRows when there is none.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows iterates a result set.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is a single-row result.
type Row interface {
	Scan(dest ...any) error
}

// ErrNoRows is what Row.Scan returns for an empty result, whatever the driver.
var ErrNoRows = errors.New("relational: no rows")

// Timestamp scans a timestamp column from either backend: PostgreSQL's timestamptz arrives
// as time.Time, SQLite's INTEGER column as Unix microseconds. NULL leaves it zero.
type Timestamp struct{ time.Time }

// Scan implements sql.Scanner.
func (t *Timestamp) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
	case time.Time:
		t.Time = v.UTC()
	case int64:
		t.Time = time.UnixMicro(v).UTC()
	default:
		return fmt.Errorf("timestamp: unsupported type %T", src)
	}
	return nil
}

// Value keeps the zero time NULL; backends convert non-zero times to their column type.
func (t Timestamp) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return t.Time, nil
}

// ts wraps a time for a nullable timestamp argument (zero = NULL).
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Truncate(time.Microsecond)
}

// placeholders returns "$from, $from+1, ..." for n arguments.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(from + i))
	}
	return b.String()
}

// stringArgs converts a string list to query arguments.
func stringArgs(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// chunks splits vs into pieces of at most n, so IN lists stay far below both backends'
// parameter limits.
func chunks(vs []string, n int) [][]string {
	var out [][]string
	for len(vs) > n {
		out = append(out, vs[:n])
		vs = vs[n:]
	}
	if len(vs) > 0 {
		out = append(out, vs)
	}
	return out
}

// inChunk is the IN-list size for set operations.
const inChunk = 500
