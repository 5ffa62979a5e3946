package admincli

import (
	"flag"
	"fmt"
	"io"
)

// cacheKey prints a cache's narinfo public key, the line Nix's trusted-public-keys needs to
// substitute from the cache.
func cacheKey() command {
	return command{path: "cache key", args: []string{"CACHE"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			c, err := in.client.Cache(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			if c.PublicKey == "" {
				return fmt.Errorf("cache %s has no signing key", c.Name)
			}
			return in.emit(map[string]string{"cache": c.Name, "public_key": c.PublicKey}, func(w io.Writer) {
				fmt.Fprintln(w, c.PublicKey)
			})
		}
	}}
}
