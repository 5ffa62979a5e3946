package admincli

import (
	"flag"
	"fmt"
	"io"
)

// cachePaths lists what a cache holds: the paths Nix can substitute from it.
func cachePaths() command {
	return command{path: "cache paths", args: []string{"CACHE"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		limit := fs.Int("limit", 100, "show at most this many (1..1000), newest first")
		return func(in *invocation) error {
			if *limit < 1 || *limit > 1000 {
				return usagef("--limit must be from 1 to 1000")
			}
			list, err := in.client.CachePaths(in.ctx, in.args[0], *limit)
			if err != nil {
				return err
			}
			return in.emit(list, func(w io.Writer) {
				t := newTable(w, "STORE PATH", "NAR SIZE", "STORED (zstd)", "REFERENCES")
				for _, p := range list.Paths {
					t.row(p.StorePath, fmt.Sprint(p.NarSize), fmt.Sprint(p.FileSize), fmt.Sprint(len(p.References)))
				}
				t.flush()
			})
		}
	}}
}
