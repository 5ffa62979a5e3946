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
		"discovery (UDP beacons) is not part of this build: fleets are formed with --cluster-admit",
	}, p.Notes...)
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
