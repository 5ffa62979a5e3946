package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/admission"
	"github.com/buildfleet/buildfleet/internal/pace/clusterctl"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// explainAdmission asks the node at addr how it would admit a machine (pace-node §8.1): about
// another machine it needs this one to be a member, so it presents a ticket from this
// machine's own node when addr is another machine.
func explainAdmission(ctx context.Context, addr string, subject []string, out io.Writer) error {
	v := clusterctl.Verb{Op: wire.OpExplainAdmission, Fields: [][]byte{nil}}
	if len(subject) == 1 {
		v.Fields[0] = []byte(subject[0])
	}
	a, err := clusterctl.Send(ctx, clusterctl.Options{Schedulers: []string{addr}, LocalNode: "127.0.0.1:6674"}, v)
	if err != nil {
		return err
	}
	f, err := wire.SplitFields(nil, a.Body, 4)
	if err != nil {
		return fmt.Errorf("the explanation from %s: %w", addr, err)
	}
	verdict, _ := wire.U8(f[0])
	routes, _ := wire.U32(f[1])
	name := string(f[3])
	if name == "" {
		name = "this connection"
	}
	fmt.Fprintf(out, "subject:    %s\nstanding:   %s\nverdict:    %s\ndecided-by: %s\n", name, standingName(f[2]),
		map[uint8]string{1: "not admitted", 2: "admitted", 3: "refused: its key is revoked"}[verdict], routeNames(admission.Route(routes)))
	return nil
}

func standingName(f []byte) string {
	if len(f) != 1 {
		return "unknown (not a member)"
	}
	return map[byte]string{1: "voter", 2: "learner", 4: "revoked"}[f[0]]
}

// routeNames lists every route that admitted, in the fold's order.
func routeNames(r admission.Route) string {
	var names []string
	for _, route := range []struct {
		bit  admission.Route
		name string
	}{{admission.Loopback, "loopback (this machine)"}, {admission.ProvenKey, "proven key"},
		{admission.Ticket, "machine ticket"}, {admission.FleetOpen, "--fleet-open"}, {admission.RevokedKey, "revoked key (refuses)"}} {
		if r&route.bit != 0 {
			names = append(names, route.name)
		}
	}
	if len(names) == 0 {
		return "nothing: no route admits it"
	}
	return strings.Join(names, ", ")
}
