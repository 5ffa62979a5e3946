package admincli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// DefaultServer is where the commands find the server unless told otherwise.
const DefaultServer = "http://127.0.0.1:3000"

// Environment variables the commands read.
const (
	EnvServer      = "GRADIENT_SERVER"
	EnvAPIKey      = "GRADIENT_API_KEY"
	EnvDataDir     = "GRADIENT_DATA_DIR"
	EnvDatabaseURL = "GRADIENT_DATABASE_URL"
)

// errUsage marks a mistake in the command line (exit 2).
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

// flagError is a flag the flag set refused (it printed the details already).
type flagError struct{ err error }

func (e flagError) Error() string { return e.err.Error() }

func isFlagError(err error) bool {
	var fe flagError
	return errors.As(err, &fe)
}

func usagef(format string, args ...any) error { return errUsage{fmt.Sprintf(format, args...)} }

// command is one `admin` subcommand. setup registers its flags and returns its body.
type command struct {
	path  string // words after "admin", e.g. "project create"
	args  []string
	local bool // works on the store directly, no server or key
	setup func(fs *flag.FlagSet) func(in *invocation) error
}

func (c command) usageLine() string {
	return strings.Join(append(append([]string{"usage: gradient-server admin", c.path}, c.args...), "[flags]"), " ")
}

// invocation is one run of a command: its positional arguments, outputs and client.
type invocation struct {
	ctx       context.Context
	args      []string
	out, diag io.Writer
	json      bool
	env       func(string) string
	client    *apiclient.Client
}

// Run runs `gradient-server admin <args>` and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, env func(string) string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage)
		return ExitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, Usage)
		return ExitOK
	}
	cmd, rest, ok := findCommand(args)
	if !ok {
		fmt.Fprintf(stderr, "gradient-server admin: unknown command %q\n\n%s", strings.Join(args[:min(2, len(args))], " "), Usage)
		return ExitUsage
	}
	err := runCommand(ctx, cmd, rest, stdout, stderr, env)
	var ue errUsage
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp): // runCommand printed the command's help
		return ExitOK
	case errors.As(err, &ue), errors.Is(err, apiclient.ErrBadConfig), isFlagError(err):
		fmt.Fprintf(stderr, "gradient-server admin %s: %v\n", cmd.path, err)
		fmt.Fprintln(stderr, cmd.usageLine())
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "gradient-server admin %s: %v\n", cmd.path, err)
		return ExitError
	}
}

// findCommand matches the longest command path (three words, then two, then one) at the
// start of args.
func findCommand(args []string) (command, []string, bool) {
	for words := min(3, len(args)); words >= 1; words-- {
		path := strings.Join(args[:words], " ")
		for _, c := range commands() {
			if c.path == path {
				return c, args[words:], true
			}
		}
	}
	return command{}, nil, false
}

func runCommand(ctx context.Context, cmd command, args []string, stdout, stderr io.Writer, env func(string) string) error {
	fs := flag.NewFlagSet("gradient-server admin "+cmd.path, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, below; -h prints to stdout
	in := &invocation{ctx: ctx, out: stdout, diag: stderr, env: env}
	fs.BoolVar(&in.json, "json", false, "print JSON instead of a table")
	var server, key string
	if !cmd.local {
		fs.StringVar(&server, "server", "", "server URL (env "+EnvServer+", default "+DefaultServer+")")
		fs.StringVar(&key, "api-key", "", "API key GRAD… (prefer env "+EnvAPIKey+": flags show in the process list)")
	}
	body := cmd.setup(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, cmd.usageLine())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return flagError{err}
	}
	if len(pos) != len(cmd.args) {
		return usagef("want %d argument(s) (%s), got %d", len(cmd.args), strings.Join(cmd.args, " "), len(pos))
	}
	in.args = pos
	if !cmd.local {
		if in.client, err = newClient(server, key, env); err != nil {
			return err
		}
	}
	return body(in)
}

func newClient(server, key string, env func(string) string) (*apiclient.Client, error) {
	server = cmp.Or(server, env(EnvServer), DefaultServer)
	key = cmp.Or(key, env(EnvAPIKey))
	if key == "" {
		return nil, usagef("no API key: set %s (or pass --api-key)", EnvAPIKey)
	}
	return apiclient.New(server, key)
}

// parseInterspersed parses flags anywhere among the positional arguments (the standard
// library stops at the first positional), so `project create NAME --repo-url URL` works.
// After "--" everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	return pos, nil
}

// emit prints v as indented JSON with --json, else through the text renderer.
func (in *invocation) emit(v any, text func(w io.Writer)) error {
	if !in.json {
		text(in.out)
		return nil
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintf(in.out, "%s\n", data)
	return err
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
