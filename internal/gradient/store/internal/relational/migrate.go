package relational

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Migration is one versioned schema step: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads dir's NNNN_name.sql files in version order. Versions must be unique
// and positive.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %q and %q share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	return out, nil
}

// Migrator applies migrations.
type Migrator struct {
	// Lock, when set, runs first in the migration transaction to serialize concurrent starts
	// (PostgreSQL's advisory lock). The transaction must then read committed data after the
	// lock is granted, not a snapshot taken before it.
	Lock string
	// InTx runs the migration transaction.
	InTx func(ctx context.Context, fn func(Tx) error) error
}

// Migrate applies every migration newer than the recorded version, all in one transaction,
// and records each in schema_migrations. A database newer than the code is refused.
func (m Migrator) Migrate(ctx context.Context, migrations []Migration, now time.Time) error {
	return m.InTx(ctx, func(tx Tx) error {
		if m.Lock != "" {
			if _, err := tx.Exec(ctx, m.Lock); err != nil {
				return fmt.Errorf("migration lock: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if n := len(migrations); n > 0 && current > migrations[n-1].Version {
			return fmt.Errorf("database schema version %d is newer than this binary's %d", current, migrations[n-1].Version)
		}
		for _, mig := range migrations {
			if mig.Version <= current {
				continue
			}
			if err := m.apply(ctx, tx, mig, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func (m Migrator) apply(ctx context.Context, tx Tx, mig Migration, now time.Time) error {
	if _, err := tx.Exec(ctx, mig.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", mig.Name, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		mig.Version, mig.Name, now.UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("record migration %s: %w", mig.Name, err)
	}
	return nil
}
