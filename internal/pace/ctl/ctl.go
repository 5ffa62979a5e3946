// Package ctl is pacectl, the operator's tool: it runs one verb against a pace cache or node and
// prints the answer. Each verb is a function from arguments to output, so tests drive them
// without a shell.
package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// Usage is printed for a wrong invocation.
const Usage = `usage: pacectl [--addr=host:port] [--password=secret] <verb> [args]

verbs:
  cache-store <key> <file>   store a file's bytes under key (wrapped as a compile-value object)
  cache-fetch <key>          print the object stored under key to standard output
  cache-drop <key>           remove key from the answering cache
  explain-admission [<machine>]
                             which routes would admit that machine (its member id or key) at the
                             node at --addr, and why; without one, the asking connection
`

// ErrUsage reports a wrong invocation; the caller exits 2.
var ErrUsage = errors.New("usage")

// Run executes one invocation. Output goes to stdout; the returned error is for stderr.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pacectl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := kvclient.Options{Timeout: 30 * time.Second, ConnectTimeout: 5 * time.Second}
	fs.StringVar(&opts.Addr, "addr", "127.0.0.1:6674", "cache or node address")
	fs.StringVar(&opts.Password, "password", os.Getenv("PACE_TOKEN"), "password for a pace-kv with --requirepass (default $PACE_TOKEN)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		return ErrUsage
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	switch {
	case verb == "cache-store" && len(rest) == 2:
		return cacheStore(ctx, opts, rest[0], rest[1], stdout)
	case verb == "cache-fetch" && len(rest) == 1:
		return cacheFetch(ctx, opts, rest[0], stdout)
	case verb == "cache-drop" && len(rest) == 1:
		return cacheDrop(ctx, opts, rest[0], stdout)
	case verb == "explain-admission" && len(rest) <= 1:
		return explainAdmission(ctx, opts.Addr, rest, stdout)
	}
	return ErrUsage
}

func cacheStore(ctx context.Context, opts kvclient.Options, key, file string, out io.Writer) error {
	obj, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	v, err := value.Encode(value.Value{Object: obj})
	if err != nil {
		return err
	}
	if err := kvclient.Store(ctx, opts, key, kvclient.StoreArgs{}, v); err != nil {
		return err
	}
	fmt.Fprintf(out, "stored %s (%d bytes) at %s\n", key, len(obj), opts.Addr)
	return nil
}

func cacheFetch(ctx context.Context, opts kvclient.Options, key string, out io.Writer) error {
	b, hit, err := kvclient.Fetch(ctx, opts, key)
	if err != nil {
		return err
	}
	if !hit {
		return fmt.Errorf("miss: %s is not in the cache at %s", key, opts.Addr)
	}
	v, err := value.Decode(b)
	if err != nil {
		return fmt.Errorf("the cache answered something that is not a compile-value: %w", err)
	}
	_, err = out.Write(v.Object)
	return err
}

func cacheDrop(ctx context.Context, opts kvclient.Options, key string, out io.Writer) error {
	c, err := kvclient.Dial(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	was, err := c.Drop(ctx, key)
	if err != nil {
		return err
	}
	if was {
		fmt.Fprintf(out, "dropped %s\n", key)
	} else {
		fmt.Fprintf(out, "%s was not there\n", key)
	}
	return nil
}
