// Package forgestatus is the pure core of commit statuses (gradient-server §12): it turns one
// status — forge, API base URL, repository, commit, state, target URL, description, context —
// into the exact HTTP request the forge's documented API takes (GitHub, Gitea/Forgejo,
// GitLab), and builds and verifies the generic outgoing webhook's HMAC-SHA256 signature.
// It does no I/O: the sender (internal/gradient/statussender) puts the requests on the wire.
package forgestatus
