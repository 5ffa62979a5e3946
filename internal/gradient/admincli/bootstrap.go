package admincli

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/postgres"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// SQLiteFile is the server's SQLite database inside its data directory; the server opens
// the same file.
const SQLiteFile = sqlite.FileName

// DefaultDataDir is the server's data directory unless --data-dir says otherwise.
const DefaultDataDir = "/var/lib/gradient-server"

// OpenStore opens the store the way the server does: PostgreSQL when databaseURL is set,
// else the SQLite database in dataDir (created, with the directory, if missing).
func OpenStore(ctx context.Context, dataDir, databaseURL string) (store.Store, error) {
	if databaseURL != "" {
		if !strings.HasPrefix(databaseURL, "postgres://") && !strings.HasPrefix(databaseURL, "postgresql://") {
			return nil, usagef("--database-url must be a postgres:// or postgresql:// URL")
		}
		return postgres.Open(ctx, databaseURL)
	}
	if dataDir == "" {
		return nil, usagef("--data-dir is empty")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	return sqlite.Open(filepath.Join(dataDir, SQLiteFile))
}

func bootstrapCommand() command {
	return command{path: "bootstrap", local: true, setup: func(fs *flag.FlagSet) func(*invocation) error {
		dataDir := fs.String("data-dir", "", "server data directory holding "+SQLiteFile+" (env "+EnvDataDir+", default "+DefaultDataDir+")")
		dbURL := fs.String("database-url", "", "PostgreSQL URL instead of SQLite (env "+EnvDatabaseURL+")")
		owner := fs.String("owner", "admin", "who the key belongs to")
		return func(in *invocation) error {
			dir := cmp.Or(*dataDir, in.env(EnvDataDir), DefaultDataDir)
			url := cmp.Or(*dbURL, in.env(EnvDatabaseURL))
			if *dataDir != "" && *dbURL != "" {
				return usagef("give --data-dir or --database-url, not both")
			}
			return bootstrap(in, dir, url, *owner)
		}
	}}
}

// bootstrap creates the first API key directly in the store and prints it once.
func bootstrap(in *invocation, dataDir, databaseURL, owner string) error {
	if strings.TrimSpace(owner) == "" {
		return usagef("--owner is empty")
	}
	s, err := OpenStore(in.ctx, dataDir, databaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	key, hash, err := peertoken.MintAPIKey(rand.Reader)
	if err != nil {
		return err
	}
	k, err := s.BootstrapAPIKey(in.ctx, store.NewAPIKey{Owner: owner, KeyHash: hash})
	if errors.Is(err, store.ErrAlreadyBootstrapped) {
		return errors.New("refusing: an API key already exists (bootstrap only creates the first one); " +
			"create more with `gradient-server admin key create` using an existing key")
	}
	if err != nil {
		return fmt.Errorf("create the first API key: %w", err)
	}
	resp := api.CreateAPIKeyResponse{Key: key, APIKey: api.APIKey{ID: k.ID, Owner: k.Owner, Active: true, CreatedAt: k.CreatedAt}}
	return in.emit(resp, func(w io.Writer) {
		fmt.Fprintf(w, "Created the first API key %s (owner %q).\n", k.ID, k.Owner)
		fmt.Fprintf(w, "The key is shown this once; only its hash is stored:\n\n  %s\n\n", key)
		fmt.Fprintf(w, "Use it with: export %s=<the key above>\n", EnvAPIKey)
	})
}
