// Package pgtest runs a throwaway PostgreSQL server for tests: it finds Debian's server
// binaries (/usr/lib/postgresql/<version>/bin), initializes a cluster in a temporary
// directory, runs the server as a child process listening only on a Unix socket in that
// directory, hands out fresh schemas, and removes everything on Stop.
//
// PostgreSQL refuses to run as root, so under root the cluster belongs to the "postgres"
// user Debian's package creates, and initdb and the server run with that user's
// credentials. On Linux the server is killed if the test process dies, so an interrupted
// test run leaves no server behind.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries: no initdb/postgres was found; install Debian's postgresql package.
var ErrNoBinaries = errors.New("pgtest: PostgreSQL server binaries not found (apt-get install postgresql)")

// Server is a running throwaway cluster.
type Server struct {
	binDir, dir, dataDir string
	cred                 *syscall.Credential // the postgres user's, when we are root
	proc                 *exec.Cmd
	exited               chan struct{}
	admin                string // superuser URL of the postgres database
}

// settings make the cluster fast and private: no TCP, no durability (tests only).
var settings = []string{
	"listen_addresses = ''",
	"fsync = off",
	"synchronous_commit = off",
	"full_page_writes = off",
	"max_connections = 200",
}

// Start initializes and starts a cluster, waiting until it accepts connections.
func Start(ctx context.Context) (*Server, error) {
	binDir, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	s := &Server{binDir: binDir}
	if os.Geteuid() == 0 {
		if s.cred, err = lookupCredential("postgres"); err != nil {
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user: %w", err)
		}
	}
	if err := s.makeDirs(); err != nil {
		return nil, err
	}
	if err := s.initAndStart(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// FindBinaries returns the newest /usr/lib/postgresql/*/bin holding initdb and postgres, or
// the directory of initdb on PATH.
func FindBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// makeDirs creates the cluster directory (short, so the socket path fits the 107-byte limit)
// owned by the user that runs the server.
func (s *Server) makeDirs() error {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	s.dir, s.dataDir = dir, filepath.Join(dir, "data")
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: chown %s: %w", dir, err)
		}
	}
	return nil
}

func (s *Server) initAndStart(ctx context.Context) error {
	initdb := s.command(ctx, "initdb", "-D", s.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	conf := "\n# pgtest\n" + strings.Join(settings, "\n") + fmt.Sprintf("\nunix_socket_directories = '%s'\n", s.dir)
	if err := appendFile(filepath.Join(s.dataDir, "postgresql.conf"), conf); err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close()
	s.proc = s.command(context.Background(), "postgres", "-D", s.dataDir)
	s.proc.Stdout, s.proc.Stderr = logFile, logFile
	if err := s.proc.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.exited = make(chan struct{})
	go func() { s.proc.Wait(); close(s.exited) }()
	s.admin = s.urlFor("postgres")
	return s.waitReady(ctx)
}

// command runs a server binary from the cluster directory, as the postgres user when we are
// root, and (on Linux) dies with the test process.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, name), args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = childAttr(s.cred)
	return cmd
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtest: write %s: %w", path, err)
	}
	return nil
}

// waitReady polls until the server accepts a connection, exits, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	for {
		c, err := pgx.Connect(ctx, s.admin)
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited during startup\n%s", s.serverLog())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w (last error: %v)\n%s", ctx.Err(), err, s.serverLog())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Server) serverLog() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if err != nil {
		return ""
	}
	return "server log:\n" + string(b)
}

func (s *Server) urlFor(db string) string {
	q := url.Values{"host": {s.dir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// URL is the superuser URL of the cluster's postgres database.
func (s *Server) URL() string { return s.admin }

// Stop shuts the server down at once (SIGQUIT, "immediate") and removes the cluster.
func (s *Server) Stop() error {
	if s.proc != nil && s.proc.Process != nil {
		s.proc.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.proc.Process.Kill()
			<-s.exited
		}
	}
	if s.dir == "" {
		return nil
	}
	return os.RemoveAll(s.dir)
}

// NewSchema creates schema name in the database at adminURL (this Server's URL, or one from
// the environment) and returns a URL whose connections use it as their search path, and a
// function that drops it. A schema per test isolates tests as well as a database per test
// does, at a fraction of the cost of CREATE DATABASE.
func NewSchema(ctx context.Context, adminURL, name string) (string, func() error, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: parse url: %w", err)
	}
	if err := execAdmin(ctx, adminURL, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return execAdmin(ctx, adminURL, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	}
	return u.String(), drop, nil
}

func execAdmin(ctx context.Context, adminURL, stmt string) error {
	c, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgtest: connect %s: %w", redact(adminURL), err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("pgtest: %s: %w", stmt, err)
	}
	return nil
}

// UniqueName makes a schema name unique to this process: prefix_pid_n.
func UniqueName(prefix string, n int64) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), n)
}

// redact drops a URL's password for error messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}
