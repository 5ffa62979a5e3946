// Command gradient-worker is gradient's Nix CI worker: it dials the server's /proto, proves itself
// with the tokens of its peers file, and runs flake evaluations and builds with the local nix. With
// --listen it is discoverable instead (gradient-protocol §4.1 as_dialed): it waits on /proto for
// the server to dial it, accepts a server whose tokens match --accepted-server-tokens-file
// (`peer_id:hash` lines, argon2id PHC or SHA-256 hex, `*` for any peer; without the file every
// server is accepted, with a warning), and runs the same job loop. `--listen` alone listens on
// 127.0.0.1:3100; `--listen=HOST:PORT` picks the address (write it with `=`: like a boolean flag,
// --listen takes no separate argument). SIGTERM or SIGINT stops it the way gradient-server §6.6
// describes (Draining, running jobs reported Canceled, at most 5 s for those reports).
//
// Environment: GRADIENT_WORKER_ID overrides the worker ID kept in <base-dir>/worker-id;
// GRADIENT_WORKER_PEERS_FILE is the default of --peers-file;
// GRADIENT_WORKER_ACCEPTED_SERVER_TOKENS_FILE the default of --accepted-server-tokens-file;
// GRADIENT_WORKER_SYSTEM_ARCHITECTURES and GRADIENT_WORKER_SYSTEM_FEATURES (comma or space
// separated) replace the systems and features read from `nix show-config`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

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
	cfg.Logger = log // worker.New gives its default nixexec.Nix this logger too
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
	log.Info("gradient-worker: starting", "worker_id", w.ID(), "server", cfg.ServerURL, "listen", cfg.Listen)
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
	fs.Var((*listenFlag)(&cfg.Listen), "listen", "wait for the server to dial this worker on /proto at `host:port` (alone: "+worker.DefaultListenAddr+"); instead of --server")
	fs.StringVar(&cfg.AcceptedServerTokensFile, "accepted-server-tokens-file", getenv(envAcceptedServerTokensFile),
		"with --listen: `file` of peer_id:hash lines a dialing server's tokens must match (none: accept every server)")
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
	if err := checkMode(cfg); err != nil {
		return cfg, level, err
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

const envAcceptedServerTokensFile = "GRADIENT_WORKER_ACCEPTED_SERVER_TOKENS_FILE"

// checkMode wants exactly one of --server and --listen: the worker either dials or is dialed,
// so one session at a time owns its build slots.
func checkMode(cfg worker.Config) error {
	switch {
	case cfg.Listen != "" && cfg.ServerURL != "":
		return errors.New("give either --server or --listen, not both")
	case cfg.Listen != "":
		if _, _, err := net.SplitHostPort(cfg.Listen); err != nil {
			return fmt.Errorf("--listen=%q: want host:port: %w", cfg.Listen, err)
		}
		return nil
	}
	if !strings.HasPrefix(cfg.ServerURL, "ws://") && !strings.HasPrefix(cfg.ServerURL, "wss://") {
		return fmt.Errorf("--server=%q: want a ws:// or wss:// URL (or --listen)", cfg.ServerURL)
	}
	return nil
}

// listenFlag is --listen: given alone it takes the default address, like a boolean flag
// (gradient-protocol §1.1: discoverable mode listens on 127.0.0.1:3100 unless told otherwise).
type listenFlag string

func (l *listenFlag) String() string { return string(*l) }

func (l *listenFlag) Set(v string) error {
	if v == "true" {
		v = worker.DefaultListenAddr
	}
	*l = listenFlag(v)
	return nil
}

// IsBoolFlag lets --listen stand without a value.
func (l *listenFlag) IsBoolFlag() bool { return true }
