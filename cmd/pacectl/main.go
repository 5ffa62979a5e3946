// Command pacectl is pace's operator tool: cache verbs against pace-kv or a node's tier.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/ctl"
)

func main() {
	err := ctl.Run(context.Background(), os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, ctl.ErrUsage):
		fmt.Fprint(os.Stderr, ctl.Usage)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "pacectl:", err)
		os.Exit(1)
	}
}
