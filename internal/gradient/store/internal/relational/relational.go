// Package relational implements store.Store once, on the relational model of
// gradient-server §9, for every backend: a backend supplies a DB (its driver, transactions
// and retry) and its migrations, and gets the same rules. SQL here is the common subset of
// SQLite and PostgreSQL (RETURNING, ON CONFLICT, recursive CTEs, partial indexes); values
// cross as strings, integers, booleans, bytes and times, which each backend maps to its
// column types.
package relational

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/uuid"
)

// Store is the shared store.Store implementation.
type Store struct {
	db     DB
	now    func() time.Time
	policy store.Policy
}

var _ store.Store = (*Store)(nil)

// New wraps a migrated database.
func New(db DB, opts store.Options) *Store {
	return &Store{db: db, now: opts.Clock, policy: opts.Policy}
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// clock is the store's current time, at the precision both backends keep (microseconds).
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// newID mints a UUIDv7: time-ordered, so "smaller job ID first" (gradient-server §6.1) is
// FIFO.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// validID reports whether s is a UUID; other strings cannot name a row (and would make
// PostgreSQL's uuid columns fail the transaction instead of finding nothing).
func validID(s string) bool { return uuid.Validate(s) == nil }

// read and write run fn in a transaction, wrapping errors with the operation's name.
func (s *Store) read(ctx context.Context, op string, fn func(Tx) error) error {
	if err := s.db.Read(ctx, fn); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

func (s *Store) write(ctx context.Context, op string, fn func(Tx) error) error {
	if err := s.db.Write(ctx, fn); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// queryAll runs query and scans every row with scan.
func queryAll[T any](ctx context.Context, tx Tx, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// readAll runs queryAll in a read transaction, wrapping errors with op.
func readAll[T any](ctx context.Context, s *Store, op string, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := s.read(ctx, op, func(tx Tx) error {
		var err error
		out, err = queryAll(ctx, tx, scan, query, args...)
		return err
	})
	return out, err
}

// scanString scans a one-column string row.
func scanString(r Row) (string, error) {
	var v string
	err := r.Scan(&v)
	return v, err
}

// encodeList stores a string list as a JSON array (never null).
func encodeList(vs []string) string {
	if vs == nil {
		vs = []string{}
	}
	b, _ := json.Marshal(vs)
	return string(b)
}

// decodeList reads encodeList's form; an empty array decodes to nil.
func decodeList(s string) ([]string, error) {
	var vs []string
	if s == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	if len(vs) == 0 {
		return nil, nil
	}
	return vs, nil
}

// notFound wraps store.ErrNotFound for a missing row, and passes other errors on.
func notFound(err error, what, id string) error {
	if errors.Is(err, ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return err
}
