package admincli

import (
	"flag"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// upstreamCommands manage a cache's upstream substituters (gradient-server §14).
func upstreamCommands() []command {
	return []command{upstreamAdd(), upstreamRemove(), upstreamList()}
}

func upstreamAdd() command {
	return command{path: "cache upstream add", args: []string{"CACHE", "URL"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		key := fs.String("key", "", "the upstream's public key, NAME:BASE64 (as in Nix's trusted-public-keys)")
		return func(in *invocation) error {
			if *key == "" {
				return usagef("--key is required")
			}
			u, err := in.client.AddUpstream(in.ctx, in.args[0], api.AddUpstreamRequest{URL: in.args[1], PublicKey: *key})
			if err != nil {
				return err
			}
			return in.emit(u, func(w io.Writer) {
				fmt.Fprintf(w, "Cache %s substitutes from %s, trusting %s.\n", in.args[0], u.URL, u.PublicKey)
			})
		}
	}}
}

func upstreamRemove() command {
	return command{path: "cache upstream remove", args: []string{"CACHE", "URL"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			if err := in.client.RemoveUpstream(in.ctx, in.args[0], in.args[1]); err != nil {
				return err
			}
			return in.emit(map[string]string{"cache": in.args[0], "removed": in.args[1]}, func(w io.Writer) {
				fmt.Fprintf(w, "Cache %s no longer substitutes from %s.\n", in.args[0], in.args[1])
			})
		}
	}}
}

func upstreamList() command {
	return command{path: "cache upstream list", args: []string{"CACHE"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			list, err := in.client.Upstreams(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(list, func(w io.Writer) {
				t := newTable(w, "URL", "TRUSTED KEY")
				for _, u := range list.Upstreams {
					t.row(u.URL, u.PublicKey)
				}
				t.flush()
			})
		}
	}}
}
