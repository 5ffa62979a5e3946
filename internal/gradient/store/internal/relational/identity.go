package relational

import (
	"context"
	"errors"

	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// WorkerIdentity implements store.Handshake: one snapshot of the worker ID's registrations
// or team worker, shaped as session.WorkerFacts, plus the token hashes by peer.
func (s *Store) WorkerIdentity(ctx context.Context, workerID string) (store.WorkerIdentity, error) {
	var out store.WorkerIdentity
	err := s.read(ctx, "worker identity", func(tx Tx) error {
		out = store.WorkerIdentity{TokenHashes: map[string]string{}}
		team, hash, err := teamFacts(ctx, tx, workerID)
		if err != nil {
			return err
		}
		if team != nil {
			out.Facts.Team = team
			out.TokenHashes[team.TeamID] = hash
			return nil
		}
		out.Facts.Registrations, err = registrationFacts(ctx, tx, workerID, out.TokenHashes)
		return err
	})
	return out, err
}

// registrationFacts reads the ID's registrations, oldest first, and fills hashes (first row
// per peer; the (peer, worker) pair is unique anyway).
func registrationFacts(ctx context.Context, tx Tx, workerID string, hashes map[string]string) ([]session.Registration, error) {
	rows, err := tx.Query(ctx, `SELECT r.peer_id, r.peer_kind, r.active, r.enable_fetch, r.enable_eval, r.enable_build,
			EXISTS (SELECT 1 FROM project_cache pc WHERE pc.project_id = r.peer_id), r.token_enc IS NOT NULL, r.token_hash
		FROM worker_registration r WHERE r.worker_id = $1 ORDER BY r.created_at, r.id`, workerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var regs []session.Registration
	for rows.Next() {
		var r session.Registration
		var kind int
		var hash string
		if err := rows.Scan(&r.PeerID, &kind, &r.Active, &r.EnableFetch, &r.EnableEval, &r.EnableBuild,
			&r.HasCache, &r.HasDialToken, &hash); err != nil {
			return nil, err
		}
		r.Kind = session.PeerKind(kind)
		if r.Kind != session.PeerProject {
			r.HasCache = false
		}
		if _, dup := hashes[r.PeerID]; !dup {
			hashes[r.PeerID] = hash
		}
		regs = append(regs, r)
	}
	return regs, rows.Err()
}

// teamFacts reads the ID's team worker with the projects granting the team's workers, or nil.
func teamFacts(ctx context.Context, tx Tx, workerID string) (*session.TeamWorker, string, error) {
	var team session.TeamWorker
	var hash string
	err := tx.QueryRow(ctx, `SELECT team_id, enabled, token_hash FROM team_worker WHERE worker_id = $1`, workerID).
		Scan(&team.TeamID, &team.Enabled, &hash)
	if errors.Is(err, ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	rows, err := tx.Query(ctx, `SELECT g.project_id, EXISTS (SELECT 1 FROM project_cache pc WHERE pc.project_id = g.project_id)
		FROM team_grant g WHERE g.team_id = $1 AND g.workers ORDER BY g.project_id`, team.TeamID)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var g session.Grant
		if err := rows.Scan(&g.ProjectID, &g.HasCache); err != nil {
			return nil, "", err
		}
		team.Grants = append(team.Grants, g)
	}
	return &team, hash, rows.Err()
}

// DialTargets implements store.Handshake.
func (s *Store) DialTargets(ctx context.Context) ([]store.DialTarget, error) {
	var out []store.DialTarget
	err := s.read(ctx, "dial targets", func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT worker_id, url, peer_id, token_enc FROM (
				SELECT worker_id, url, peer_id, token_enc, created_at FROM worker_registration
					WHERE active AND token_enc IS NOT NULL AND url IS NOT NULL
				UNION ALL
				SELECT worker_id, url, team_id, token_enc, created_at FROM team_worker
					WHERE enabled AND token_enc IS NOT NULL AND url IS NOT NULL) t
			ORDER BY worker_id, url, created_at`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var workerID, url, peer string
			var tok []byte
			if err := rows.Scan(&workerID, &url, &peer, &tok); err != nil {
				return err
			}
			if n := len(out); n == 0 || out[n-1].WorkerID != workerID || out[n-1].URL != url {
				out = append(out, store.DialTarget{WorkerID: workerID, URL: url})
			}
			last := &out[len(out)-1]
			last.Tokens = append(last.Tokens, store.DialToken{PeerID: peer, TokenEnc: tok})
		}
		return rows.Err()
	})
	return out, err
}

// ListRegistrations implements store.Reads.
func (s *Store) ListRegistrations(ctx context.Context, workerID string) ([]store.Registration, error) {
	return readAll(ctx, s, "list registrations", scanRegistration, `SELECT id, peer_id, peer_kind, worker_id, active,
			enable_fetch, enable_eval, enable_build, display_name, COALESCE(url, ''), token_enc IS NOT NULL, created_at
		FROM worker_registration WHERE $1 = '' OR worker_id = $1 ORDER BY worker_id, created_at, id`, workerID)
}

func scanRegistration(row Row) (store.Registration, error) {
	var r store.Registration
	var kind int
	var created Timestamp
	err := row.Scan(&r.ID, &r.PeerID, &kind, &r.WorkerID, &r.Active, &r.EnableFetch, &r.EnableEval,
		&r.EnableBuild, &r.DisplayName, &r.URL, &r.HasDialToken, &created)
	r.PeerKind, r.CreatedAt = session.PeerKind(kind), created.Time
	return r, err
}

// ListTeamWorkers implements store.Reads.
func (s *Store) ListTeamWorkers(ctx context.Context, teamID string) ([]store.TeamWorkerRow, error) {
	if !validID(teamID) {
		return nil, nil
	}
	return readAll(ctx, s, "list team workers", func(r Row) (store.TeamWorkerRow, error) {
		var w store.TeamWorkerRow
		var created Timestamp
		err := r.Scan(&w.ID, &w.TeamID, &w.WorkerID, &w.URL, &w.Enabled, &w.HasDialToken, &created)
		w.CreatedAt = created.Time
		return w, err
	}, `SELECT id, team_id, worker_id, COALESCE(url, ''), enabled, token_enc IS NOT NULL, created_at
		FROM team_worker WHERE team_id = $1 ORDER BY worker_id`, teamID)
}
