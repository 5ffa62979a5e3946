package cacheserve

import (
	"crypto/sha256"
	"hash"
	"io"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// streamHasher hashes a served object's chunks on a goroutine of its own, so that hashing
// one chunk overlaps reading and sending the next (the hash would otherwise add its whole
// cost to every pull). At most one chunk is in flight: its buffer must stay unchanged until
// the next call to add, sum or stop.
type streamHasher struct {
	h    hash.Hash
	work chan []byte
	done chan struct{}
	busy bool
}

// newStreamHasher starts hashing an object whose first off bytes are read from r first
// (a resume hashes the prefix it does not send), leaving r at off.
func newStreamHasher(r io.ReadSeeker, off int64) (*streamHasher, error) {
	h := sha256.New()
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if _, err := io.CopyN(h, r, off); err != nil {
		return nil, err
	}
	c := &streamHasher{h: h, work: make(chan []byte), done: make(chan struct{})}
	go func() {
		for b := range c.work {
			c.h.Write(b)
			c.done <- struct{}{}
		}
	}()
	return c, nil
}

// add hashes b in the background once the chunk before it is hashed.
func (c *streamHasher) add(b []byte) {
	c.wait()
	c.busy = true
	c.work <- b
}

func (c *streamHasher) wait() {
	if c.busy {
		<-c.done
		c.busy = false
	}
}

// matches hashes the last chunk and reports whether the whole object hashes to want.
func (c *streamHasher) matches(last []byte, want nixhash.SHA256) bool {
	c.wait()
	c.h.Write(last)
	return want.Equal(nixhash.SHA256(c.h.Sum(nil)))
}

// stop ends the goroutine; the chunk in flight is hashed first, so its buffer is free after.
func (c *streamHasher) stop() {
	c.wait()
	close(c.work)
}
