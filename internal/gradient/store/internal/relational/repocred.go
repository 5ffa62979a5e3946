package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// SetProjectSSHKey implements store.RepoCredentials.
func (s *Store) SetProjectSSHKey(ctx context.Context, projectID string, sealed []byte) error {
	return s.setProjectSecret(ctx, "set project ssh key", `UPDATE project SET ssh_key_enc = $2 WHERE id = $1`, projectID, sealed)
}

// SetProjectHTTPSToken implements store.RepoCredentials.
func (s *Store) SetProjectHTTPSToken(ctx context.Context, projectID string, sealed []byte) error {
	return s.setProjectSecret(ctx, "set project https token", `UPDATE project SET https_token_enc = $2 WHERE id = $1`, projectID, sealed)
}

func (s *Store) setProjectSecret(ctx context.Context, op, query, projectID string, sealed []byte) error {
	return s.write(ctx, op, func(tx Tx) error {
		if err := mustExist(ctx, tx, "project", projectID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, query, projectID, nilIfEmpty(sealed))
		return err
	})
}

// ProjectCredentials implements store.RepoCredentials.
func (s *Store) ProjectCredentials(ctx context.Context, projectID string) (store.SealedCredentials, error) {
	var out store.SealedCredentials
	if !validID(projectID) {
		return out, notFound(ErrNoRows, "project", projectID)
	}
	err := s.read(ctx, "project credentials", func(tx Tx) error {
		err := tx.QueryRow(ctx, `SELECT ssh_key_enc, https_token_enc FROM project WHERE id = $1`, projectID).
			Scan(&out.SSHKeyEnc, &out.HTTPSTokenEnc)
		return notFound(err, "project", projectID)
	})
	return out, err
}
