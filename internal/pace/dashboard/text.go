package dashboard

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// table is one section of /fleet.txt.
type table struct {
	name   string
	header []string
	rows   [][]string
}

// Sections are the names /fleet.txt?section= accepts, in the order the full text lists them.
var Sections = []string{"kpi", "machines", "workers", "leases", "refusals", "unserved", "conditions"}

func tables(m Model) []table {
	return []table{kpiTable(m), machineTable(m), workerTable(m), leaseTable(m), refusalTable(m), unservedTable(m), conditionTable(m)}
}

func machineTable(m Model) table {
	t := table{name: "machines", header: []string{"id", "role", "node_endpoint", "consensus_endpoint", "key", "standing",
		"last_heard_s", "slots", "in_flight", "registrations", "version"}}
	for _, r := range m.Machines {
		t.rows = append(t.rows, []string{r.ID, r.Role, r.NodeEndpoint, r.ConsensusEndpoint, r.Key, r.Standing,
			optInt(r.LastHeardS), itoa(r.Slots), itoa(r.InFlight), itoa(r.Registrations), r.Version})
	}
	return t
}

func workerTable(m Model) table {
	t := table{name: "workers", header: []string{"machine", "fingerprint", "toolchain", "endpoint", "slots", "in_flight",
		"offerable", "limited_by", "withdrawn", "registered_age_s", "last_picked_age_s", "heartbeat_age_s"}}
	for _, r := range m.Workers {
		t.rows = append(t.rows, []string{r.Machine, r.Fingerprint, r.Toolchain, r.Endpoint, itoa(r.Slots), itoa(r.InFlight),
			itoa(r.Offerable), r.LimitedBy, r.Withdrawn, i64(r.RegisteredAgeS), optInt(r.LastPickedAgeS), i64(r.HeartbeatAgeS)})
	}
	return t
}

func leaseTable(m Model) table {
	t := table{name: "leases", header: []string{"key", "fingerprint", "worker", "age_s", "expires_in_s"}}
	for _, r := range m.Leases {
		t.rows = append(t.rows, []string{r.Key, r.Toolchain, r.Worker, i64(r.AgeS), i64(r.ExpiresInS)})
	}
	return t
}

func refusalTable(m Model) table {
	t := table{name: "refusals", header: []string{"cause", "count", "counter", "hint"}}
	for _, r := range m.Refusals {
		t.rows = append(t.rows, []string{r.Cause, strconv.FormatUint(r.Count, 10), r.Counter, r.Hint})
	}
	return t
}

func unservedTable(m Model) table {
	t := table{name: "unserved", header: []string{"fingerprint", "toolchain", "last_asked_s"}}
	for _, r := range m.Unserved {
		t.rows = append(t.rows, []string{r.Fingerprint, r.Toolchain, i64(r.LastAskedAgo)})
	}
	return t
}

func conditionTable(m Model) table {
	t := table{name: "conditions", header: []string{"name", "state", "detail"}}
	for _, r := range m.Conditions {
		t.rows = append(t.rows, []string{r.Name, r.State, r.Detail})
	}
	return t
}

func kpiTable(m Model) table {
	t := table{name: "kpi", header: []string{"name", "value", "unit", "of"}}
	for _, name := range KPINames {
		k := m.KPI[name]
		t.rows = append(t.rows, []string{name, optFloat(k.Value), k.Unit, optFloat(k.Of)})
	}
	return t
}

// writeText writes one section, or every section under a "# section" line when section is "".
func writeText(w io.Writer, m Model, section string) {
	all := section == ""
	if all {
		fmt.Fprintf(w, "# pace fleet: cluster %s, leader %s, term %d\n", escapeCell(m.ClusterID), escapeCell(m.NodeID), m.Term)
	}
	for _, t := range tables(m) {
		if !all && t.name != section {
			continue
		}
		if all {
			fmt.Fprintf(w, "\n# section %s\n", t.name)
		}
		writeRow(w, t.header)
		for _, r := range t.rows {
			writeRow(w, r)
		}
	}
}

func writeRow(w io.Writer, cells []string) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(w, "\t")
		}
		io.WriteString(w, escapeCell(c))
	}
	io.WriteString(w, "\n")
}

// escapeCell makes text one TSV cell: tab, newline, carriage return and backslash become
// \t, \n, \r and \\, so a hostile label can neither add a column nor a row.
func escapeCell(s string) string {
	if !strings.ContainsAny(s, "\t\n\r\\") {
		return s
	}
	return cellEscaper.Replace(s)
}

var cellEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func itoa(v int) string  { return strconv.Itoa(v) }
func i64(v int64) string { return strconv.FormatInt(v, 10) }
func optInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return i64(*v)
}

func optFloat(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}
