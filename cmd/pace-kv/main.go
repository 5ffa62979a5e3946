// Command pace-kv is pace's shared cache server: it answers FETCH, STORE and CACHE-DROP of the
// 0xFC protocol, optionally behind a password, and serves /metrics and /healthz over HTTP.
//
// Every flag may also be given in a --config file, one "name = value" per line ('#' starts a
// comment); the command line wins. A password file that is empty or only whitespace is an
// error, never "no password": serving without one beyond loopback takes --no-auth. SIGHUP
// re-reads the file and the command line and applies the password (--requirepass,
// --requirepass-file or --no-auth) and the log level, or changes nothing and logs why; SIGTERM
// stops accepting, lets in-flight requests finish and exits 0.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
)

const version = "0.1.0"

func main() {
	o, err := kv.ParseArgs(os.Args[1:])
	if errors.Is(err, kv.ErrVersion) {
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
