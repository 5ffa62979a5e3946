package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// Defaults and environment variables of gradient-protocol §4.2.
const (
	DefaultBaseDir = "/var/lib/gradient-worker"
	EnvWorkerID    = "GRADIENT_WORKER_ID"
	EnvPeersFile   = "GRADIENT_WORKER_PEERS_FILE"
	workerIDFile   = "worker-id"
)

// ErrBadWorkerID: the worker ID (file or environment) is not a UUID.
var ErrBadWorkerID = errors.New("worker: worker ID is not a UUID")

// LoadWorkerID returns the worker's persistent ID: $GRADIENT_WORKER_ID when set (getenv reads
// the environment), else the UUID in <baseDir>/worker-id, minted as a UUIDv7 and written there
// on first start.
func LoadWorkerID(baseDir string, getenv func(string) string) (string, error) {
	if id := strings.TrimSpace(getenv(EnvWorkerID)); id != "" {
		return canonicalID(id, EnvWorkerID)
	}
	path := filepath.Join(baseDir, workerIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		return canonicalID(strings.TrimSpace(string(b)), path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("worker: reading worker ID: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("worker: minting worker ID: %w", err)
	}
	if err := writeFileAtomic(path, []byte(id.String()+"\n")); err != nil {
		return "", fmt.Errorf("worker: writing worker ID: %w", err)
	}
	return id.String(), nil
}

func canonicalID(s, source string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrBadWorkerID, source)
	}
	return id.String(), nil
}

// writeFileAtomic writes data to path through a temporary file and a rename, so that a crash
// never leaves a half-written file (the worker ID, the remembered probe) behind.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
