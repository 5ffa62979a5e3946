package api

import "time"

// CreateTeamRequest is POST /api/v1/teams.
type CreateTeamRequest struct {
	Name string `json:"name"`
}

// Team is a team (gradient-protocol §4.2): its workers and the projects that grant them.
type Team struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	CreatedAt time.Time    `json:"created_at"`
	Workers   []TeamWorker `json:"workers"`
	Projects  []string     `json:"granting_projects"` // names of the projects granting the team's workers
}

// TeamList is GET /api/v1/teams.
type TeamList struct {
	Teams []Team `json:"teams"`
}

// RegisterTeamWorkerRequest is POST /api/v1/teams/{team}/workers. A url makes the worker
// server-dialed, as for a registration.
type RegisterTeamWorkerRequest struct {
	WorkerID string `json:"worker_id"`
	URL      string `json:"url,omitempty"`
}

// TeamWorker is a team worker (never with its token or hash).
type TeamWorker struct {
	WorkerID     string    `json:"worker_id"`
	TeamID       string    `json:"team_id"`
	Enabled      bool      `json:"enabled"`
	URL          string    `json:"url,omitempty"`
	HasDialToken bool      `json:"has_dial_token"`
	CreatedAt    time.Time `json:"created_at,omitzero"`
}

// RegisterTeamWorkerResponse carries the team worker's token, shown this once. The
// challenge names the team, so the peers file line is `<team id>:<token>`.
type RegisterTeamWorkerResponse struct {
	TeamWorker    TeamWorker `json:"team_worker"`
	Token         string     `json:"token"`
	PeersFileLine string     `json:"peers_file_line"`
	Warnings      []string   `json:"warnings,omitempty"`
}
