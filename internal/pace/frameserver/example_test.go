package frameserver_test

import (
	"context"
	"log"
	"net"
	"sync/atomic"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/frameserver"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// A pace-kv-shaped surface: FETCH and AUTH served, scheduler verbs sent
// elsewhere, everything else unknown-opcode. The credential switch is an
// atomic a SIGHUP handler would flip.
func Example() {
	var passwordSet atomic.Bool
	handler := frameserver.HandlerFunc(func(ctx context.Context, c *frameserver.Conn, req *frameserver.Request) frameserver.Reply {
		switch req.Info.Family {
		case wire.FamilyScheduler:
			return frameserver.Refuse(wire.Refusal{Code: wire.CodeDispatchNotPermitted,
				Message: "pace-kv runs no scheduler; send LEASE to a pace-node"})
		}
		switch req.Op() {
		case wire.OpAuth:
			c.SetAuthenticated(true) // after a constant-time secret check
			return frameserver.Ok(nil)
		case wire.OpFetch:
			return frameserver.Miss()
		}
		return frameserver.RefuseCode(wire.CodeUnknownOpcode)
	})
	srv, err := frameserver.New(frameserver.Config{
		Handler:            handler,
		SessionCap:         wire.DefaultSessionCap,
		CredentialRequired: passwordSet.Load,
		MaxConns:           1024,
		IdleTimeout:        30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(l)
	// On SIGTERM: finish in-flight requests, then stop.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
