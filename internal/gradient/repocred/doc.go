// Package repocred is how gradient reaches a private repository (gradient-server §13): a
// project's deploy key (an SSH private key) or HTTPS token, sealed at rest under the server's
// secret key, carried to a worker in the protocol's Credential message, and turned into the
// environment git needs for one fetch.
//
// Prepare writes the secret into a fresh private directory (0700, files 0600) and returns
// the environment for git together with a cleanup that removes the directory: the worker
// calls it per job, the server's polling per ls-remote. Nothing secret ever goes on a
// command line (other processes can read argv); the environment names only files.
//
// The SSH key helpers (Generate, ParseKey, AuthorizedKey) use golang.org/x/crypto/ssh for
// the OpenSSH formats. Refused recognises a repository's refusal of the credential in git's
// message, so a job fails at once with a clear reason instead of retrying.
package repocred
