// Command failover measures how long a pace fleet goes without granting leases when its leader
// dies: `make bench` kills the leader with kill -9, notes the time, and starts it, which sends
// LEASE for one toolchain to a surviving node every few milliseconds — following not-leader to
// whoever the node names — until one is granted, releases it, and prints the milliseconds from
// the kill to that grant.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/machineticket"
	"github.com/buildfleet/buildfleet/internal/pace/verbs"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

func main() {
	addr := flag.String("addr", "", "a surviving node's node port")
	fp := flag.String("fingerprint", "", "toolchain fingerprint to lease for (pace-cc --print-toolchain-fingerprint gcc)")
	since := flag.Int64("since", 0, "unix nanoseconds of the kill")
	every := flag.Duration("every", 10*time.Millisecond, "time between attempts")
	limit := flag.Duration("limit", time.Minute, "give up after this long")
	flag.Parse()
	if *addr == "" || *fp == "" || *since == 0 {
		fmt.Fprintln(os.Stderr, "failover: -addr, -fingerprint and -since are required")
		os.Exit(2)
	}
	deadline := time.Now().Add(*limit)
	var last error
	for time.Now().Before(deadline) {
		grantedAt, err := tryLease(*addr, *fp)
		if err == nil {
			fmt.Printf("failover_ms=%.0f\n", float64(grantedAt.UnixNano()-*since)/1e6)
			return
		}
		last = err
		time.Sleep(*every)
	}
	fmt.Fprintln(os.Stderr, "failover: no lease granted within", *limit, "- the last answer:", last)
	os.Exit(1)
}

// tryLease asks addr, then (once) the leader it names, and releases a grant at once.
func tryLease(addr, fp string) (time.Time, error) {
	key := make([]byte, 32)
	rand.Read(key)
	req := verbs.LeaseRequest{Fingerprint: fp, Key: hex.EncodeToString(key)}
	for hop := 0; hop < 2; hop++ {
		body, err := exchange(addr, wire.OpLease, req.Append(nil))
		if err == nil {
			at := time.Now()
			if g, err := verbs.ParseLeaseGrant(body); err == nil {
				exchange(addr, wire.OpRelease, verbs.ReleaseRequest{Token: g.Token, Key: req.Key}.Append(nil))
			}
			return at, nil
		}
		var ref wire.Refusal
		if !errors.As(err, &ref) || ref.Code != wire.CodeNotLeader || ref.Message == "" {
			return time.Time{}, fmt.Errorf("%s: %w", addr, err)
		}
		addr = ref.Message
	}
	return time.Time{}, errors.New("not-leader twice")
}

func exchange(addr string, op wire.Op, payload []byte) ([]byte, error) {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := nc.Write(machineticket.Request(op, payload)); err != nil {
		return nil, err
	}
	_, body, err := wire.ReadReply(bufio.NewReader(nc), op, wire.MaxReportReply, nil)
	return body, err
}
