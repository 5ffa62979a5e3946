package kvclient

import "context"

// Fetch asks for key on a fresh connection (pace-cc opens one per operation).
func Fetch(ctx context.Context, opts Options, key string) ([]byte, bool, error) {
	c, err := Dial(ctx, opts)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	return c.FetchAppend(ctx, nil, key)
}

// Store offers value under key on a fresh connection.
func Store(ctx context.Context, opts Options, key string, args StoreArgs, value []byte) error {
	c, err := Dial(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Store(ctx, key, args, value)
}
