package main

import (
	"bufio"
	"fmt"
	"net"
	"os"

	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// maxCannedPayload bounds what the canned server reads for one request: a LEASE or RELEASE is
// a few hundred bytes, and a peer that declares more is cut off before anything is allocated.
const maxCannedPayload = 64 << 10

// serveCanned is the floor the node is compared with: a server that neither schedules nor
// signs. It takes one real grant from the node at c.addr (and releases it), then answers every
// LEASE on listen with those same bytes and every RELEASE with an empty Ok — one goroutine per
// connection and one write per reply, as the node's frame server does. The same client against
// it measures what this machine's sockets, wakeups and the client itself allow; the node's rate
// over this one says what the node adds. It prints its address and serves until killed.
func serveCanned(c config, listen string) error {
	grant, err := cannedGrant(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("canned server: %w", err)
	}
	fmt.Fprintf(os.Stdout, "canned-listen=%s\n", ln.Addr())
	replies := map[wire.Op][]byte{ // read-only from here on: shared by every connection
		wire.OpLease:   wire.AppendReply(nil, wire.StatusOk, grant),
		wire.OpRelease: wire.AppendReply(nil, wire.StatusOk, nil),
	}
	unknown := wire.AppendRefusalReply(nil, wire.Refuse(wire.CodeUnknownOpcode, "the canned server answers LEASE and RELEASE only"))
	for {
		nc, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("canned server: %w", err)
		}
		go serveCannedConn(nc, replies, unknown)
	}
}

// cannedGrant is the Ok payload of one LEASE granted by the node, released again at once.
func cannedGrant(c config) ([]byte, error) {
	c.freshConns = false
	s, err := newSession(c)
	if err != nil {
		return nil, err
	}
	defer s.close()
	key := s.nextKey()
	payload, refused, err := s.exchange(&s.lease, wire.OpLease, verbs.LeaseRequest{Fingerprint: c.fingerprint, Key: key, Codecs: clientCodecs}.Append(nil))
	switch {
	case err != nil:
		return nil, fmt.Errorf("taking the canned grant: %w", err)
	case refused != nil:
		return nil, fmt.Errorf("taking the canned grant: LEASE refused: %w", *refused)
	}
	grant := append([]byte(nil), payload...)
	parsed, err := verbs.ParseLeaseGrant(grant)
	if err != nil {
		return nil, fmt.Errorf("the canned grant: %w", err)
	}
	_, refused, err = s.exchange(&s.release, wire.OpRelease, verbs.ReleaseRequest{Token: parsed.Token, Key: key}.Append(nil))
	switch {
	case err != nil:
		return nil, fmt.Errorf("releasing the canned grant: %w", err)
	case refused != nil:
		return nil, fmt.Errorf("releasing the canned grant: RELEASE refused: %w", *refused)
	}
	return grant, nil
}

// serveCannedConn answers one connection's requests from replies by op until it closes or
// sends a malformed or oversized frame; any other op gets unknown.
func serveCannedConn(nc net.Conn, replies map[wire.Op][]byte, unknown []byte) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 4096)
	var hdr [wire.RequestHeaderLen]byte
	for {
		h, err := wire.ReadRequestHeader(br, &hdr)
		if err != nil || h.PayloadLen > maxCannedPayload {
			return
		}
		if _, err := br.Discard(int(h.PayloadLen)); err != nil {
			return
		}
		reply, ok := replies[h.Op]
		if !ok {
			reply = unknown
		}
		if _, err := nc.Write(reply); err != nil {
			return
		}
	}
}
