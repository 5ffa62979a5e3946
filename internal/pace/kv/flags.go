package kv

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/flagval"
	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// ErrVersion is ParseArgs's answer to --version.
var ErrVersion = errors.New("version")

// Options are pace-kv's command line after its --config file (pace-node §11).
type Options struct {
	Config       Config // Password is filled by Resolve
	ConfigFile   string
	PasswordFile string
	NoAuth       bool
	LogLevel     string
	syncMode     string
	passGiven    bool // --requirepass was given, even empty
}

// ParseArgs reads the --config file (when the command line names one), then the command line,
// which wins, and applies the startup rules; an error is a usage error (exit 2).
func ParseArgs(args []string) (Options, error) {
	o, err := parseFlags(args)
	if err == nil && o.ConfigFile != "" {
		var fileArgs []string
		if fileArgs, err = readConfig(o.ConfigFile); err == nil {
			o, err = parseFlags(append(fileArgs, args...))
		}
	}
	if err != nil {
		return o, err
	}
	return o, o.Resolve()
}

func parseFlags(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("pace-kv", flag.ContinueOnError)
	maxDisk, maxMem := flagval.Size{}, flagval.Size{Bytes: 512 << 20}
	maxValue, inflight := flagval.Size{Bytes: 256 << 20}, flagval.Size{Bytes: frameserver.DefaultPayloadBudget}
	idle, frame := flagval.Duration{D: 60 * time.Second}, flagval.Duration{D: frameserver.DefaultFrameTimeout}
	authWait := flagval.Duration{D: frameserver.DefaultAuthTimeout}
	c := &o.Config
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:6674", "cache listener `host:port`")
	fs.StringVar(&c.Storage, "storage", "", "disk tier `directory` (memory only when empty)")
	fs.Var(&maxDisk, "max-disk", "disk tier budget, e.g. 20GiB (0 = unbounded)")
	fs.Var(&maxMem, "max-memory", "memory tier budget: stored values kept in memory, e.g. 1GiB (0 = no memory tier)")
	fs.Var(&maxValue, "storage-max-value", "largest value accepted or served")
	fs.Var(&inflight, "max-inflight", "payload bytes of frames over 64KiB received or handled at once; a STORE that finds no room within 2s is refused endpoint-busy unread")
	fs.StringVar(&c.Password, "requirepass", "", "password every connection must AUTH with")
	fs.StringVar(&o.PasswordFile, "requirepass-file", "", "read the password from this `file` (re-read on SIGHUP; empty or whitespace is refused)")
	fs.BoolVar(&o.NoAuth, "no-auth", false, "serve without a password (needed to listen beyond loopback without one, or to drop one on SIGHUP)")
	fs.StringVar(&c.MetricsListen, "metrics", "127.0.0.1:9259", "HTTP /metrics and /healthz `host:port` (empty = off)")
	fs.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&c.MaxConns, "max-connections", frameserver.DefaultMaxConns, "open connections; at the cap a newcomer displaces a long-idle connection of the busiest address, or is closed at once")
	fs.IntVar(&c.MaxConnsPerAddr, "max-connections-per-address", frameserver.DefaultMaxConnsPerAddr, "open connections of one source address (IPv4, or IPv6 /64; loopback too)")
	fs.Var(&idle, "idle-timeout", "close a connection idle this long between requests")
	fs.Var(&frame, "frame-timeout", "a request header must arrive within this of its first byte, and a payload within this plus its length at 64KiB/s")
	fs.Var(&authWait, "auth-timeout", "with a password, close a connection that has not authenticated this long after connecting")
	fs.StringVar(&o.syncMode, "storage-sync", "always", "always: fsync every stored value; never: survive a crash of pace-kv but not of the machine")
	fs.StringVar(&o.ConfigFile, "config", "", "read flags from this `file` first (name = value lines)")
	version := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	fs.Visit(func(f *flag.Flag) { o.passGiven = o.passGiven || f.Name == "requirepass" })
	switch {
	case *version:
		return o, ErrVersion
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case maxValue.Bytes == 0 || maxValue.Bytes > 1<<31:
		return o, fmt.Errorf("--storage-max-value=%d: want 1 byte to 2GiB", maxValue.Bytes)
	case inflight.Bytes == 0 || inflight.Bytes > 1<<40:
		return o, fmt.Errorf("--max-inflight=%d: want 1 byte to 1TiB", inflight.Bytes)
	}
	c.MaxDisk, c.MaxMemory, c.MaxValue = int64(maxDisk.Bytes), int64(maxMem.Bytes), uint32(maxValue.Bytes)
	c.MaxInflight, c.IdleTimeout, c.FrameTimeout, c.AuthTimeout = int64(inflight.Bytes), idle.D, frame.D, authWait.D
	return o, o.parseSync()
}

func (o *Options) parseSync() error {
	switch o.syncMode {
	case "always":
		o.Config.Sync = store.SyncAlways
	case "never":
		o.Config.Sync = store.SyncNever
	default:
		return fmt.Errorf("--storage-sync=%q: want always or never", o.syncMode)
	}
	return nil
}

// Resolve reads the password (from --requirepass-file when given) into Config.Password and
// applies the password rules: --requirepass and --requirepass-file are exclusive and neither
// goes with --no-auth; a blank password is an error, never "no password"; and a listener
// beyond loopback without a password needs --no-auth.
func (o *Options) Resolve() error {
	switch {
	case o.Config.Password != "" && o.PasswordFile != "":
		return errors.New("--requirepass and --requirepass-file are exclusive")
	case o.NoAuth && (o.passGiven || o.PasswordFile != ""):
		return errors.New("--no-auth turns authentication off: give it without --requirepass or --requirepass-file")
	case o.passGiven && strings.TrimSpace(o.Config.Password) == "":
		return fmt.Errorf("--requirepass: %w; to serve without a password, leave it out (--no-auth beyond loopback)", ErrBlankPassword)
	}
	if o.PasswordFile != "" {
		secret, err := readPasswordFile(o.PasswordFile)
		if err != nil {
			return err
		}
		o.Config.Password = secret
	}
	if o.Config.Password == "" && !o.NoAuth && !loopbackListen(o.Config.Listen) {
		return fmt.Errorf("--listen=%s reaches beyond this machine without a password: give --requirepass-file, or --no-auth to serve anyone who can connect", o.Config.Listen)
	}
	return nil
}

// readPasswordFile reads a password file: its content up to trailing line ends; a file that is
// empty or only whitespace is refused.
func readPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading --requirepass-file: %w", err)
	}
	secret := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(secret) == "" {
		return "", fmt.Errorf("--requirepass-file %s: %w; to serve without a password, give --no-auth instead", path, ErrBlankPassword)
	}
	return secret, nil
}

// loopbackListen reports whether a listen address reaches this machine only.
func loopbackListen(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

// Reload applies a re-read configuration's password (SIGHUP): a new secret replaces the old,
// --no-auth turns authentication off, and a configuration that names no password while one is
// in force is refused — as is one that does not resolve (a blank file): the old secret stays.
// It returns whether a password is in force afterwards.
func (s *Server) Reload(o Options) (bool, error) {
	switch {
	case o.NoAuth:
		s.DisablePassword()
	case o.Config.Password != "":
		if err := s.SetPassword(o.Config.Password); err != nil {
			return s.PasswordRequired(), err
		}
	case s.PasswordRequired():
		return true, errors.New("the configuration names no password while one is in force: keep --requirepass-file, or give --no-auth to turn authentication off")
	}
	return s.PasswordRequired(), nil
}
