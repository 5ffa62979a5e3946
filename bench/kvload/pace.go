package main

import (
	"context"
	"errors"

	"github.com/buildfleet/buildfleet/internal/pace/kvclient"
	"github.com/buildfleet/buildfleet/internal/pace/value"
)

// paceClient speaks 0xFC through the same client pace-cc and the node tier use. Values are
// wrapped as compile-values (pace-kv refuses anything else), which adds 9 bytes.
type paceClient struct{ c *kvclient.Conn }

func dialPace(addr, password string) (client, error) {
	c, err := kvclient.Dial(context.Background(), kvclient.Options{Addr: addr, Password: password})
	if err != nil {
		return nil, err
	}
	return &paceClient{c: c}, nil
}

func (p *paceClient) set(key string, val []byte) error {
	v, err := value.Encode(value.Value{Object: val})
	if err != nil {
		return err
	}
	return p.c.Store(context.Background(), key, kvclient.StoreArgs{}, v)
}

func (p *paceClient) get(key string, buf []byte) ([]byte, error) {
	out, hit, err := p.c.FetchAppend(context.Background(), buf, key)
	if err == nil && !hit {
		err = errors.New("miss")
	}
	return out, err
}

func (p *paceClient) close() { p.c.Close() }
