package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

func run(o options) error {
	var level slog.LevelVar
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &level}))
	pw, err := o.password()
	if err != nil {
		return err
	}
	o.cfg.Password, o.cfg.Logger, o.cfg.Version = pw, log, version
	srv, err := kv.New(o.cfg)
	if err != nil {
		return err
	}
	log.Info("pace-kv ready", "listen", srv.Addr().String(), "metrics", addrOrOff(srv),
		"storage", storageDesc(o.cfg), "auth", pw != "")
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
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
// not parse changes nothing; other settings need a restart.
func reload(srv *kv.Server, level *slog.LevelVar, log *slog.Logger) {
	o, err := load(os.Args[1:])
	var pw string
	if err == nil {
		pw, err = o.password()
	}
	var lvl slog.LevelVar
	if err == nil {
		err = lvl.UnmarshalText([]byte(o.logLevel))
	}
	if err != nil {
		log.Error("reload refused; nothing changed", "err", err)
		return
	}
	srv.SetPassword(pw)
	level.Set(lvl.Level())
	log.Info("reloaded", "auth", pw != "", "log-level", level.Level().String())
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
