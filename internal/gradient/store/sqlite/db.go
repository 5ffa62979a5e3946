package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store/internal/relational"
)

// database adapts database/sql with modernc's driver to relational.DB.
type database struct {
	writer, reader *sql.DB
}

// busyRetries bounds the retries of a transaction that met another process's lock after
// the busy timeout.
const busyRetries = 3

func (d *database) Read(ctx context.Context, fn func(relational.Tx) error) error {
	tx, err := d.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(sqlTx{tx})
}

func (d *database) Write(ctx context.Context, fn func(relational.Tx) error) error {
	var err error
	for range busyRetries {
		if err = d.writeOnce(ctx, fn); !errBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return err
}

func (d *database) writeOnce(ctx context.Context, fn func(relational.Tx) error) error {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	if err := fn(sqlTx{tx}); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (d *database) IsUniqueViolation(err error) bool { return errUnique(err) }

func (d *database) Close() error {
	return errors.Join(d.reader.Close(), d.writer.Close())
}

// sqlTx adapts *sql.Tx: $N placeholders become ?N, times become Unix microseconds.
type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, rewrite(query), convertArgs(args)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (relational.Rows, error) {
	rows, err := t.tx.QueryContext(ctx, rewrite(query), convertArgs(args)...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) relational.Row {
	return sqlRow{t.tx.QueryRowContext(ctx, rewrite(query), convertArgs(args)...)}
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

type sqlRow struct{ row *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return relational.ErrNoRows
	}
	return err
}

func convertArgs(args []any) []any {
	for i, a := range args {
		if t, ok := a.(time.Time); ok {
			args[i] = t.UnixMicro()
		}
	}
	return args
}

// rewrite turns PostgreSQL's $N into SQLite's ?N (numbered, so reuse and order match).
// The shared SQL has no '$' inside string literals.
func rewrite(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	b := []byte(query)
	for i, c := range b {
		if c == '$' && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9' {
			b[i] = '?'
		}
	}
	return string(b)
}
