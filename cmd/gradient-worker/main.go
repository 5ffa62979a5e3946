// Command gradient-worker is gradient's Nix CI worker: it dials the server's /proto, proves
// itself with the tokens of its peers file, and runs flake evaluations and builds with the
// local nix. SIGTERM or SIGINT stops it the way spec §6.6 describes (Draining, running jobs
// reported Canceled, at most 5 s for those reports).
//
// Environment: GRADIENT_WORKER_ID overrides the worker ID kept in <base-dir>/worker-id;
// GRADIENT_WORKER_PEERS_FILE is the default of --peers-file;
// GRADIENT_WORKER_SYSTEM_ARCHITECTURES and GRADIENT_WORKER_SYSTEM_FEATURES (comma or space
// separated) replace the systems and features read from `nix show-config`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
)

func main() {
	cfg, level, err := parse(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gradient-worker:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = log
	cfg.Nix = nixexec.New(nixexec.Options{Logger: log})
	if cfg.WorkerID, err = worker.LoadWorkerID(cfg.BaseDir, os.Getenv); err != nil {
		log.Error("gradient-worker: worker ID", "err", err)
		os.Exit(1)
	}
	w, err := worker.New(cfg)
	if err != nil {
		log.Error("gradient-worker: start", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Info("gradient-worker: starting", "worker_id", w.ID(), "server", cfg.ServerURL)
	if err := w.Run(ctx); err != nil {
		log.Error("gradient-worker", "err", err)
		os.Exit(1)
	}
}

// parse reads the flags and the environment into a worker configuration.
func parse(args []string, getenv func(string) string) (worker.Config, slog.Level, error) {
	var cfg worker.Config
	var level slog.Level
	fs := flag.NewFlagSet("gradient-worker", flag.ContinueOnError)
	fs.StringVar(&cfg.ServerURL, "server", "", "server `URL` of /proto, e.g. wss://ci.example.org/proto")
	fs.StringVar(&cfg.BaseDir, "base-dir", worker.DefaultBaseDir, "`directory` for worker-id and job scratch space")
	fs.StringVar(&cfg.PeersFile, "peers-file", getenv(worker.EnvPeersFile), "peers `file` of peer_id:token lines")
	fs.IntVar(&cfg.MaxConcurrentBuilds, "max-concurrent-builds", 1, "builds run at once")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return cfg, level, err
	}
	if fs.NArg() > 0 {
		return cfg, level, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !strings.HasPrefix(cfg.ServerURL, "ws://") && !strings.HasPrefix(cfg.ServerURL, "wss://") {
		return cfg, level, fmt.Errorf("--server=%q: want a ws:// or wss:// URL", cfg.ServerURL)
	}
	if cfg.MaxConcurrentBuilds < 1 {
		return cfg, level, fmt.Errorf("--max-concurrent-builds=%d: want at least 1", cfg.MaxConcurrentBuilds)
	}
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return cfg, level, fmt.Errorf("--log-level=%q: %w", *logLevel, err)
	}
	cfg.Architectures = list(getenv("GRADIENT_WORKER_SYSTEM_ARCHITECTURES"))
	cfg.SystemFeatures = list(getenv("GRADIENT_WORKER_SYSTEM_FEATURES"))
	return cfg, level, nil
}

// list splits a comma or space separated setting; nil when unset.
func list(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}
