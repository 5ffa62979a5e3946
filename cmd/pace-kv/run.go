package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

func run(o kv.Options) error {
	var level slog.LevelVar
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &level}))
	if os.Getenv("GOMEMLIMIT") == "" {
		// Collect garbage before the process outgrows what its budgets allow.
		debug.SetMemoryLimit(o.Config.MemoryCeiling())
	}
	o.Config.Logger, o.Config.Version = log, version
	srv, err := kv.New(o.Config)
	if err != nil {
		return err
	}
	// Signals are caught before the ready line, so a SIGHUP sent on seeing it reloads.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	log.Info("pace-kv ready", "listen", srv.Addr().String(), "metrics", addrOrOff(srv),
		"storage", storageDesc(o.Config), "auth", srv.PasswordRequired(), "memory-ceiling", o.Config.MemoryCeiling())
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	for {
		select {
		case err := <-done:
			return err
		case <-hup:
			reload(srv, &level, log)
		case sig := <-stop:
			log.Info("stopping: finishing in-flight requests", "signal", sig.String())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := srv.Shutdown(ctx)
			cancel()
			<-done
			return err
		}
	}
}

// reload re-reads the configuration and applies the password and log level. Anything that does
// not parse, or a password that is blank or dropped without --no-auth, changes nothing; other
// settings need a restart.
func reload(srv *kv.Server, level *slog.LevelVar, log *slog.Logger) {
	o, err := kv.ParseArgs(os.Args[1:])
	var lvl slog.LevelVar
	if err == nil {
		err = lvl.UnmarshalText([]byte(o.LogLevel))
	}
	var auth bool
	if err == nil {
		auth, err = srv.Reload(o)
	}
	if err != nil {
		log.Error("reload refused; nothing changed", "err", err, "auth", srv.PasswordRequired())
		return
	}
	level.Set(lvl.Level())
	log.Info("reloaded", "auth", auth, "log-level", level.Level().String())
}

func addrOrOff(srv *kv.Server) string {
	if a := srv.MetricsAddr(); a != nil {
		return a.String()
	}
	return "off"
}

func storageDesc(c kv.Config) string {
	if c.Storage == "" {
		return "memory only"
	}
	return c.Storage
}
