// Package sqlite is the embedded store backend (modernc.org/sqlite, pure Go): one database
// file, by default <data-dir>/gradient.db, in WAL mode with foreign keys on.
//
// Writes go through a single connection, so SQLite's one-writer rule never turns into
// SQLITE_BUSY between our own transactions, and every write transaction starts with BEGIN
// IMMEDIATE (no read-to-write lock upgrades). Reads use a separate pool of read-only
// connections that WAL lets run beside the writer. A busy timeout, and a bounded retry on
// SQLITE_BUSY, cover other processes opening the same file. Migrations run at Open.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/internal/relational"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file's name inside the server's data directory.
const FileName = "gradient.db"

// busyTimeoutMillis is how long a connection waits for another process's lock.
const busyTimeoutMillis = 10000

// PathIn returns the database path inside a data directory.
func PathIn(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Open opens (creating if needed) the database at path, applies pending migrations, and
// returns the store.
func Open(path string, opts ...store.Option) (store.Store, error) {
	o := store.BuildOptions(opts...)
	db, err := openDB(path)
	if err != nil {
		return nil, err
	}
	ms, err := relational.LoadMigrations(migrations, "migrations")
	if err == nil {
		err = relational.Migrator{InTx: db.Write}.Migrate(context.Background(), ms, o.Clock())
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite %s: %w", path, err)
	}
	return relational.New(db, o), nil
}

func openDB(path string) (*database, error) {
	writer, err := sql.Open("sqlite", dsn(path, "immediate", false))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	// The writer connects first so WAL mode is set before any reader opens the file.
	if err := writer.Ping(); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	reader, err := sql.Open("sqlite", dsn(path, "deferred", true))
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	n := max(2, runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	return &database{writer: writer, reader: reader}, nil
}

// dsn builds the connection string: WAL, NORMAL sync (durable at checkpoints, never
// corrupt), foreign keys, busy timeout, and the BEGIN mode.
func dsn(path, txlock string, readOnly bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeoutMillis))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", txlock)
	if readOnly {
		q.Set("_query_only", "1")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// errBusy reports SQLITE_BUSY or SQLITE_LOCKED from another process.
func errBusy(err error) bool {
	var se interface{ Code() int }
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff // primary code; extended codes keep it in the low byte
	return code == 5 || code == 6
}

// errUnique reports a UNIQUE or PRIMARY KEY constraint violation.
func errUnique(err error) bool {
	var se interface{ Code() int }
	if !errors.As(err, &se) {
		return false
	}
	const sqliteConstraintUnique, sqliteConstraintPrimaryKey = 2067, 1555
	return se.Code() == sqliteConstraintUnique || se.Code() == sqliteConstraintPrimaryKey
}
