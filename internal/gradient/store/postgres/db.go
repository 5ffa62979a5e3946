package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store/internal/relational"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// database adapts pgx to relational.DB.
type database struct{ pool *pool }

// serializationRetries bounds the reruns of a write transaction that lost a serialization
// conflict; each rerun waits a little longer, with jitter, so contenders spread out.
const serializationRetries = 20

func (d *database) Read(ctx context.Context, fn func(relational.Tx) error) error {
	return d.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (d *database) Write(ctx context.Context, fn func(relational.Tx) error) error {
	var err error
	for i := range serializationRetries {
		if err = d.run(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn); !retryable(err) {
			return err
		}
		backoff := time.Duration(1<<min(i, 6)) * time.Millisecond
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff + rand.N(backoff)):
		}
	}
	return fmt.Errorf("gave up after %d serialization conflicts: %w", serializationRetries, err)
}

// migrationTx runs READ COMMITTED: after waiting for the migration lock, the transaction
// must see the schema another server just committed.
func (d *database) migrationTx(ctx context.Context, fn func(relational.Tx) error) error {
	return d.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
}

func (d *database) run(ctx context.Context, opts pgx.TxOptions, fn func(relational.Tx) error) error {
	conn, err := d.pool.acquire(ctx)
	if err != nil {
		return err
	}
	defer d.pool.release(conn)
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(pgTx{tx}); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// retryable reports serialization_failure (40001) and deadlock_detected (40P01).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

func (d *database) IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func (d *database) Close() error { return d.pool.close() }

type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (t pgTx) Query(ctx context.Context, query string, args ...any) (relational.Rows, error) {
	rows, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) relational.Row {
	return pgRow{t.tx.QueryRow(ctx, query, args...)}
}

type pgRow struct{ row pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return relational.ErrNoRows
	}
	return err
}
