// Command gradient-server is gradient's Nix CI server: one HTTP listener serving workers on
// /proto, the JSON administration API under /api/v1 and /healthz, with its state in SQLite
// under --data-dir (or PostgreSQL with --database-url) and NARs, zstd-compressed as workers
// upload them, under <data-dir>/nar.
//
// Caches are also served to Nix itself under /cache/{cache}/ (nix-cache-info, narinfo
// signed with the cache's key, zstd NARs) and as read-only sessions on /cache/{cache}/proto;
// public caches are anonymous unless --anonymous-cache=false. `gradient-server admin cache
// key CACHE` prints the line for Nix's trusted-public-keys.
//
// `gradient-server admin …` runs the administration commands (bootstrap, projects, caches,
// worker registrations, evaluations, logs); see `gradient-server admin help`.
//
// The --listen port caps open connections in total and per remote address, closing idle
// keep-alives to make room first, and bounds request heads, bodies and keep-alive idleness
// (the --max-http-* and --http-*-timeout flags; gradient-server §10.14).
//
// Projects with polling on are polled with git ls-remote every --poll-interval (60 s, "off"
// disables it), and signed push webhooks arrive at /api/v1/hooks/{forge}/{project}; either
// starts one evaluation per new head commit (gradient-server §11).
// Commit statuses and the signed outgoing webhook of each project go out from an outbox in
// the state, linking to --public-url (gradient-server §12).
//
// At start, before the first session, interrupted work is recovered (gradient-server §6.6).
// SIGTERM or SIGINT sends every worker Draining, closes every session at once and exits 0.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/httpfront"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/server"
	"github.com/buildfleet/buildfleet/internal/gradient/trigger"
)

type options struct {
	listen, metrics, dataDir, databaseURL string
	logLevel                              string
	heartbeat                             time.Duration
	limits                                server.Limits
	http                                  httpfront.Limits
	refuseInbound                         bool
	anonymousCache                        bool
	cacheKeyHost                          string
	pollInterval                          trigger.Interval
	retention                             server.RetentionConfig
	publicURL                             string
	uiListen                              string // the web UI's own listener (gradient-server §17)
	uiPublic                              bool
}

func parse(args []string, getenv func(string) string) (options, error) {
	o := options{limits: server.DefaultLimits, http: httpfront.DefaultLimits, pollInterval: trigger.Interval(trigger.DefaultPollInterval)}
	fs := flag.NewFlagSet("gradient-server", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:3000", "HTTP `host:port` serving /proto, /api/v1 and /healthz")
	fs.StringVar(&o.metrics, "metrics", "", "`host:port` serving Prometheus /metrics (off when empty)")
	fs.StringVar(&o.dataDir, "data-dir", cmp.Or(getenv(admincli.EnvDataDir), admincli.DefaultDataDir), "`directory` holding the SQLite database and the NARs")
	fs.StringVar(&o.databaseURL, "database-url", getenv(admincli.EnvDatabaseURL), "PostgreSQL `URL` (postgres://…) instead of SQLite")
	fs.DurationVar(&o.heartbeat, "worker-heartbeat-timeout", server.DefaultHeartbeatTimeout, "drop a worker silent this long (0 disables the check)")
	fs.Uint64Var(&o.limits.DefaultTimeoutSecs, "build-default-timeout", o.limits.DefaultTimeoutSecs, "build timeout in `seconds` when a derivation names none (0: no limit)")
	fs.Uint64Var(&o.limits.DefaultMaxSilentSecs, "build-default-max-silent", o.limits.DefaultMaxSilentSecs, "build silence limit in `seconds` when a derivation names none (0: no limit)")
	fs.BoolVar(&o.refuseInbound, "refuse-inbound", false, "refuse every worker that dials in (403 server is not accepting connections)")
	fs.BoolVar(&o.anonymousCache, "anonymous-cache", true, "let anyone read public caches without an API key (/cache/{cache}/ and its proto sessions)")
	fs.StringVar(&o.cacheKeyHost, "cache-key-host", "", "`name` starting new caches' signing key names, <name>-<cache>-1 (default \"gradient\")")
	fs.Var(&o.pollInterval, "poll-interval", "`duration` between polls of the projects with polling on, jittered ±10% (0 or off: no polling; gradient-server §11.2)")
	fs.StringVar(&o.publicURL, "public-url", "", "`URL` browsers reach this server at; commit statuses link to <URL>/evaluations/<id> (default: http://<the --ui-listen address, else the --listen address, as bound>, none when it is every interface)")
	fs.StringVar(&o.uiListen, "ui-listen", "", "`host:port` serving the web UI and /api/v1 beside it (off when empty)")
	fs.BoolVar(&o.uiPublic, "ui-public", false, "let signed-out visitors of the web UI read projects, evaluations, builds and public caches")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&o.http.MaxConns, "max-http-connections", 0, "open connections the --listen port holds at most, WebSocket sessions included (0: three quarters of the open-file limit, at most 4096)")
	fs.IntVar(&o.http.MaxConnsPerAddr, "max-http-connections-per-address", o.http.MaxConnsPerAddr, "open connections one remote IP address may hold on the --listen port")
	fs.DurationVar(&o.http.IdleTimeout, "http-idle-timeout", o.http.IdleTimeout, "close a keep-alive connection that sends no request for this long")
	fs.DurationVar(&o.http.HeaderTimeout, "http-header-timeout", o.http.HeaderTimeout, "drop a connection whose request head takes longer than this")
	fs.DurationVar(&o.http.BodyTimeout, "http-body-timeout", o.http.BodyTimeout, "drop a request whose body takes longer than this to arrive")
	server.RegisterRetentionFlags(fs, &o.retention)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (administration commands run as `gradient-server admin …`)", fs.Arg(0))
	}
	if err := forgestatus.CheckPublicURL(o.publicURL); err != nil {
		return o, err
	}
	if o.heartbeat < 0 {
		return o, errors.New("--worker-heartbeat-timeout must not be negative")
	}
	if o.http.MaxConns < 0 || o.http.MaxConnsPerAddr < 1 || o.http.IdleTimeout <= 0 || o.http.HeaderTimeout <= 0 || o.http.BodyTimeout <= 0 {
		return o, errors.New("--max-http-connections must not be negative, and the per-address cap and the --http-*-timeout durations must be positive")
	}
	return o, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "admin" {
		os.Exit(admincli.Run(context.Background(), os.Args[2:], os.Stdout, os.Stderr, os.Getenv))
	}
	o, err := parse(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gradient-server:", err)
		os.Exit(2)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "gradient-server: --log-level:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := run(o, log); err != nil {
		log.Error("gradient-server", "err", err)
		os.Exit(1)
	}
}

func run(o options, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st, err := admincli.OpenStore(ctx, o.dataDir, o.databaseURL)
	if err != nil {
		return fmt.Errorf("opening the state: %w", err)
	}
	defer st.Close()
	nars, err := narstore.Open(o.dataDir)
	if err != nil {
		return fmt.Errorf("opening NAR storage: %w", err)
	}
	secrets, err := aeadbox.LoadOrCreate(o.dataDir)
	if err != nil {
		return fmt.Errorf("opening the secret key: %w", err)
	}
	ln, uiLn, link, err := listen(o)
	if err != nil {
		return err
	}
	srv := server.New(server.Config{Store: st, NARs: nars, Logger: log, HeartbeatTimeout: o.heartbeat,
		Limits: o.limits, RefuseInbound: o.refuseInbound, Secrets: secrets,
		DenyAnonymousCache: !o.anonymousCache, CacheKeyHost: o.cacheKeyHost, PollInterval: time.Duration(o.pollInterval),
		Retention: o.retention, PublicURL: forgestatus.PublicURL(o.publicURL, link)})
	if _, err := srv.Recover(ctx); err != nil {
		ln.Close()
		return fmt.Errorf("recovering interrupted work: %w", err)
	}
	front := httpfront.New(ln, httpfront.Config{Handler: srv.Handler(), Limits: o.http, Log: srv.HostileLog()})
	ui := srv.ServeWebUI(uiLn, server.WebUIConfig{Public: o.uiPublic, CacheURL: "http://" + ln.Addr().String(), Limits: o.http})
	metricsAddr, err := serveMetrics(ctx, o.metrics, srv.MetricsHandler(append(front.Counters().Metrics(), ui.Metrics()...)...))
	if err != nil {
		return err
	}
	go srv.Run(ctx)
	go front.Serve()
	log.Info("gradient-server ready", "listen", ln.Addr().String(), "metrics", metricsAddr, "state", stateName(o), "data_dir", o.dataDir,
		"max_http_connections", front.Limits().MaxConns, "per_address", front.Limits().MaxConnsPerAddr, "http_idle_timeout", o.http.IdleTimeout)
	<-ctx.Done()
	log.Info("stopping: sending Draining and closing every session")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(shutdownCtx)
	ui.Shutdown(shutdownCtx)
	return front.Shutdown(shutdownCtx)
}

// listen binds --listen and, when set, --ui-listen, before the server is made: links to pages
// (--public-url's default) point at the UI's /evaluations/<id> when it runs.
func listen(o options) (ln, uiLn net.Listener, link net.Addr, err error) {
	if ln, err = net.Listen("tcp", o.listen); err != nil {
		return nil, nil, nil, err
	}
	if o.uiListen == "" {
		return ln, nil, ln.Addr(), nil
	}
	if uiLn, err = net.Listen("tcp", o.uiListen); err != nil {
		ln.Close()
		return nil, nil, nil, fmt.Errorf("--ui-listen: %w", err)
	}
	return ln, uiLn, uiLn.Addr(), nil
}

// serveMetrics serves /metrics on addr until ctx ends and returns the bound address ("off"
// without one): a listener of its own, so the public one does not expose the counters.
func serveMetrics(ctx context.Context, addr string, metrics http.Handler) (string, error) {
	if addr == "" {
		return "off", nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	context.AfterFunc(ctx, func() { hs.Close() })
	return ln.Addr().String(), nil
}

func stateName(o options) string {
	if o.databaseURL != "" {
		return "postgresql"
	}
	return "sqlite"
}
