package verbs

import "github.com/buildfleet/buildfleet/internal/pace/wire"

// ParseFleetSummary reads a fleet summary from the contents of the one nested field
// FleetSummary.AppendField writes (without its length prefix), for carriers other than
// FLEET-SUMMARY's Ok body: discovery's beacons and proofs (pace-wire §1.17) carry the same
// record, so they are checked by the same parser and the same bounds.
func ParseFleetSummary(field []byte) (FleetSummary, error) {
	p := newParser(wire.OpFleetSummary)
	s := p.fleetSummary(field)
	if p.failed() {
		return FleetSummary{}, p.result()
	}
	return s, nil
}
