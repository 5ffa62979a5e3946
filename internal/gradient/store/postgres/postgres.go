// Package postgres is the store backend for larger installations: PostgreSQL through pgx/v5.
//
// Write transactions run SERIALIZABLE and are retried on serialization failures and
// deadlocks, so the rules of the relational core (one open assignment per job, readiness and
// cascades across concurrent reports, the worker-ID exclusivity) hold with any number of
// servers and sessions on one database. Reads run in read-only REPEATABLE READ snapshots.
// Connections come from a small pool of our own (pgxpool would add a module). Migrations
// run at Open under an advisory lock, so concurrent starts apply them once.
package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/internal/relational"
	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// maxConns bounds the pool; PostgreSQL's default max_connections is 100.
const maxConns = 10

// migrationLock is the advisory lock key that serializes concurrent migrations
// ("gradient" in ASCII).
const migrationLock = `SELECT pg_advisory_xact_lock(7450061510870461556)`

// Open connects to the database at url (postgres://user:pass@host/db?sslmode=...), applies
// pending migrations, and returns the store.
func Open(ctx context.Context, url string, opts ...store.Option) (store.Store, error) {
	o := store.BuildOptions(opts...)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", err)
	}
	db := &database{pool: newPool(cfg, maxConns)}
	ms, err := relational.LoadMigrations(migrations, "migrations")
	if err == nil {
		err = relational.Migrator{Lock: migrationLock, InTx: db.migrationTx}.Migrate(ctx, ms, o.Clock())
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return relational.New(db, o), nil
}
