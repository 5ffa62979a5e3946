package store

import "context"

// RepoCredentials keeps a project's sealed repository credentials (gradient-server §13.1).
// The store never sees them in the clear: the server seals them before they arrive and opens
// them only to send one to a worker or to run git itself.
type RepoCredentials interface {
	// SetProjectSSHKey replaces a project's sealed deploy key; nil removes it. ErrNotFound
	// for an unknown project.
	SetProjectSSHKey(ctx context.Context, projectID string, sealed []byte) error
	// SetProjectHTTPSToken replaces a project's sealed https token (with its username); nil
	// removes it. ErrNotFound for an unknown project.
	SetProjectHTTPSToken(ctx context.Context, projectID string, sealed []byte) error
	// ProjectCredentials reads a project's sealed credentials; ErrNotFound for an unknown
	// project.
	ProjectCredentials(ctx context.Context, projectID string) (SealedCredentials, error)
}

// SealedCredentials are a project's credentials as stored, each nil when unset.
type SealedCredentials struct {
	SSHKeyEnc     []byte
	HTTPSTokenEnc []byte
}
