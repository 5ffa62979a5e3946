package session

// PeerKind is what registered a worker (gradient-protocol §4.2). Only projects need a cache
// subscription (gradient-protocol §4.4 step 4).
type PeerKind uint8

const (
	PeerProject PeerKind = iota
	PeerCache
	PeerProxy
)

func (k PeerKind) String() string {
	switch k {
	case PeerProject:
		return "project"
	case PeerCache:
		return "cache"
	case PeerProxy:
		return "proxy"
	}
	return "unknown"
}

// Registration is one worker_registration row as the handshake sees it (gradient-server §9).
type Registration struct {
	PeerID string
	Kind   PeerKind
	Active bool
	// EnableFetch, EnableEval and EnableBuild clamp the negotiated capabilities
	// (gradient-protocol §5).
	EnableFetch, EnableEval, EnableBuild bool
	// HasCache: the project is subscribed to at least one cache. Ignored for caches and
	// proxies.
	HasCache bool
	// HasDialToken: the server holds this registration's plaintext token for the URL it
	// dials. A server-dialed reauth that finds an active registration with a token the
	// session did not carry closes the session so the next dial carries it
	// (gradient-protocol §4.3).
	HasDialToken bool
}

// TeamWorker is a team_worker row with the projects granting the team's workers
// (gradient-protocol §4.2).
type TeamWorker struct {
	TeamID  string
	Enabled bool
	Grants  []Grant
}

// Grant is a project that grants a team's workers.
type Grant struct {
	ProjectID string
	HasCache  bool
}

// WorkerFacts is what the server knows about one worker ID: every registration (active or
// not) or its team worker. A worker ID belongs to one registration owner or one team worker
// (gradient-protocol §4.2); when Team is set the registrations are ignored, as the decision
// checks teams first.
type WorkerFacts struct {
	Registrations []Registration
	Team          *TeamWorker
}

// Registered reports whether any registration or team worker exists for the ID, active or
// not (the gradient-protocol §4.4 bookkeeping's "registered worker ID").
func (f WorkerFacts) Registered() bool { return f.Team != nil || len(f.Registrations) > 0 }

// ActiveRegistrations lists the active registrations, first row per peer ID. Empty for a
// team worker.
func (f WorkerFacts) ActiveRegistrations() []Registration {
	if f.Team != nil {
		return nil
	}
	seen := make(map[string]bool, len(f.Registrations))
	var out []Registration
	for _, r := range f.Registrations {
		if r.Active && !seen[r.PeerID] {
			seen[r.PeerID] = true
			out = append(out, r)
		}
	}
	return out
}

// Challenge is the AuthChallenge peer list (gradient-protocol §4.1 Greeted): the team ID for
// a team worker, otherwise the active registrations' peer IDs.
func (f WorkerFacts) Challenge() []string {
	if f.Team != nil {
		return []string{f.Team.TeamID}
	}
	regs := f.ActiveRegistrations()
	peers := make([]string, len(regs))
	for i, r := range regs {
		peers[i] = r.PeerID
	}
	return peers
}
