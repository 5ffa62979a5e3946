package node

import (
	"fmt"
	"io"
	"strings"
)

// PrintSurfaces writes the map pace-node §10.1 describes, then the rules the configuration
// breaks. It returns the exit status: 0 when the node would start, 2 when it would refuse.
func (p Plan) PrintSurfaces(w io.Writer) int {
	switch p.Mode {
	case "":
		fmt.Fprintln(w, "mode: solitary (no cluster minted yet; the first start mints one)")
	default:
		fmt.Fprintf(w, "mode: %s\n", p.Mode)
	}
	fmt.Fprintln(w)
	for _, s := range p.Surfaces {
		if s.Bind == "" {
			fmt.Fprintf(w, "%-17s %-21s %s\n", s.Name, "-", s.Note)
		} else {
			fmt.Fprintf(w, "%-17s %-21s %s\n", s.Name, s.Bind, s.Proto)
		}
	}
	p.printDialled(w)
	fmt.Fprintf(w, "\nstate directory:\n  %s (%s)\n", orNone(p.StateDir), p.StateDirReason)
	fmt.Fprintf(w, "\nfleet:\n  cluster    %s\n", orDefault(p.ClusterID, "none minted yet"))
	pin := "none (--fleet-id unset: discovery is trust-on-first-use)"
	if id := p.Cfg.FleetID.ClusterID; id != "" {
		pin = id + "@… (" + fmt.Sprint(len(p.Cfg.FleetID.Keys)) + " key(s): only this fleet is joined, on its word alone)"
	}
	fmt.Fprintf(w, "  pinned to  %s\n", pin)
	p.printNotes(w)
	if len(p.Violations) == 0 {
		return 0
	}
	fmt.Fprintln(w, "\nrefused: this node would not start:")
	for _, v := range p.Violations {
		fmt.Fprintf(w, "  %s\n", v)
	}
	return 2
}

func (p Plan) printDialled(w io.Writer) {
	fmt.Fprintln(w, "\ndialled at:")
	if p.Advertise != "" {
		how := ""
		switch {
		case p.FollowsRoute:
			how = " (auto: the address this machine routes from, re-derived while running)"
		case p.AdvertiseAuto:
			how = " (auto: the node port binds only loopback)"
		}
		fmt.Fprintf(w, "  node endpoint       %-21s -- signed into leases; what clients DIAL%s\n", p.Advertise, how)
	}
	if p.RaftEndpoint != "" {
		how := ""
		if p.RaftFollowsRoute {
			how = " (auto: re-derived with the node endpoint)"
		}
		fmt.Fprintf(w, "  consensus endpoint  %-21s -- what peers DIAL; the raft row above is what this node BINDS%s\n", p.RaftEndpoint, how)
	}
}

func (p Plan) printNotes(w io.Writer) {
	notes := append([]string{
		"the cache verbs (FETCH, STORE, CACHE-DROP) answer this machine only, whatever the node bind",
		"a systemd .socket unit is not served on the node surface: an inherited descriptor is refused at startup",
	}, p.Notes...)
	if !p.Cfg.Discovery.Off {
		notes = append(notes, "--discovery's address is where beacons are sent; both discovery sockets bind the wildcard",
			"the discovery reply port must be allowed inbound (a rule scoped to the program, or pin --discovery-reply-port and open it): peers seen but never authenticated is the sign of a firewall dropping it")
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

func orNone(s string) string { return orDefault(s, "none") }

func orDefault(s, d string) string {
	if strings.TrimSpace(s) == "" {
		return d
	}
	return s
}
