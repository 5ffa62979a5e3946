// Package forgehook verifies and reads push webhook deliveries from GitHub, Gitea/Forgejo
// and GitLab (gradient-server §11.3). It is pure: headers and body bytes in, a verdict or an
// Event out.
//
// Verify runs first and alone: it checks the delivery's signature (GitHub's
// X-Hub-Signature-256 and Gitea's X-Gitea-Signature, HMAC-SHA256 of the body; GitLab's
// X-Gitlab-Token, the secret itself) in constant time, without parsing anything. Only a
// verified body goes to Parse, which reads a push (its ref and new head; a deletion is
// ignored) or a pull/merge request opened, updated or reopened from the same repository
// (its head commit, under the forge's own ref for it, refs/pull/N/head or
// refs/merge-requests/N/head). Requests from forks are ignored: their code is not the
// project's to run with the project's workers. Everything else is an ignored event, with
// the reason.
package forgehook
