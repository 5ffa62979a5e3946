// Command pace-kv is pace's shared cache server: it answers FETCH, STORE and CACHE-DROP of the
// 0xFC protocol, optionally behind a password, and serves /metrics and /healthz over HTTP.
//
// Every flag may also be given in a --config file, one "name = value" per line ('#' starts a
// comment); the command line wins. SIGHUP re-reads the file and the command line and applies the
// password (--requirepass or --requirepass-file) and the log level; SIGTERM stops accepting, lets
// in-flight requests finish and exits 0.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/flagval"
	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/store"
)

const version = "0.1.0"

type options struct {
	cfg          kv.Config
	configFile   string
	passwordFile string
	logLevel     string
	syncMode     string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("pace-kv", flag.ContinueOnError)
	maxDisk, maxMem := flagval.Size{}, flagval.Size{Bytes: 512 << 20}
	maxValue := flagval.Size{Bytes: 256 << 20}
	idle := flagval.Duration{D: 60 * time.Second}
	fs.StringVar(&o.cfg.Listen, "listen", "127.0.0.1:6674", "cache listener `host:port`")
	fs.StringVar(&o.cfg.Storage, "storage", "", "disk tier `directory` (memory only when empty)")
	fs.Var(&maxDisk, "max-disk", "disk tier budget, e.g. 20GiB (0 = unbounded)")
	fs.Var(&maxMem, "max-memory", "memory tier budget, e.g. 1GiB (0 = no memory tier)")
	fs.Var(&maxValue, "storage-max-value", "largest value accepted or served")
	fs.StringVar(&o.cfg.Password, "requirepass", "", "password every connection must AUTH with")
	fs.StringVar(&o.passwordFile, "requirepass-file", "", "read the password from this `file` (re-read on SIGHUP)")
	fs.StringVar(&o.cfg.MetricsListen, "metrics", "127.0.0.1:9259", "HTTP /metrics and /healthz `host:port` (empty = off)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&o.cfg.MaxConns, "max-connections", 1024, "open connections beyond this are closed at once")
	fs.Var(&idle, "idle-timeout", "close a connection idle this long")
	fs.StringVar(&o.syncMode, "storage-sync", "always", "always: fsync every stored value; never: survive a crash of pace-kv but not of the machine")
	fs.StringVar(&o.configFile, "config", "", "read flags from this `file` first (name = value lines)")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *version {
		return o, errVersion
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if maxValue.Bytes == 0 || maxValue.Bytes > 1<<31 {
		return o, fmt.Errorf("--storage-max-value=%d: want 1 byte to 2GiB", maxValue.Bytes)
	}
	o.cfg.MaxDisk, o.cfg.MaxMemory, o.cfg.MaxValue = int64(maxDisk.Bytes), int64(maxMem.Bytes), uint32(maxValue.Bytes)
	o.cfg.IdleTimeout = idle.D
	switch o.syncMode {
	case "always":
		o.cfg.Sync = store.SyncAlways
	case "never":
		o.cfg.Sync = store.SyncNever
	default:
		return o, fmt.Errorf("--storage-sync=%q: want always or never", o.syncMode)
	}
	if o.cfg.Password != "" && o.passwordFile != "" {
		return o, errors.New("--requirepass and --requirepass-file are exclusive")
	}
	return o, nil
}

var errVersion = errors.New("version")

// load parses the --config file (when the command line names one) and then the command line.
func load(args []string) (options, error) {
	o, err := parseFlags(args)
	if err != nil || o.configFile == "" {
		return o, err
	}
	fileArgs, err := readConfig(o.configFile)
	if err != nil {
		return o, err
	}
	return parseFlags(append(fileArgs, args...))
}

// readConfig turns "name = value" lines into --name=value arguments.
func readConfig(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	var args []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || name == "config" {
			return nil, fmt.Errorf("--config %s:%d: want name = value", path, n)
		}
		args = append(args, "--"+name+"="+strings.TrimSpace(val))
	}
	return args, sc.Err()
}

// reloadable reads what SIGHUP may change: the password file and the log level.
func (o options) password() (string, error) {
	if o.passwordFile == "" {
		return o.cfg.Password, nil
	}
	b, err := os.ReadFile(o.passwordFile)
	if err != nil {
		return "", fmt.Errorf("reading --requirepass-file: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func main() {
	o, err := load(os.Args[1:])
	if errors.Is(err, errVersion) {
		fmt.Println("pace-kv", version)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pace-kv:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "pace-kv:", err)
		os.Exit(1)
	}
}
