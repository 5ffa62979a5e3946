package repocred

import "strings"

// refusals are what git, ssh and the forges say when a repository refuses the credential
// presented (or the lack of one). A fetch that fails this way fails the same way on retry.
var refusals = []string{
	"permission denied (publickey",
	"host key verification failed",
	"authentication failed for",
	"could not read username",
	"could not read password",
	"the requested url returned error: 401",
	"the requested url returned error: 403",
	"repository not found",
	"access denied",
	"invalid username or password",
}

// Refused reports whether git's message says the repository refused access, as opposed to
// a network or server failure worth retrying.
func Refused(gitMessage string) bool {
	m := strings.ToLower(gitMessage)
	for _, r := range refusals {
		if strings.Contains(m, r) {
			return true
		}
	}
	return false
}

// Hint is the operator's next step when a fetch of a repoURL with a credential of kind was
// refused.
func Hint(repoURL string, kind Kind) string {
	switch {
	case ForURL(repoURL) == SSHKey && kind == None:
		return "the project has no deploy key: run `gradient-server admin project ssh-key generate PROJECT` and add the printed public key to the repository's deploy keys"
	case ForURL(repoURL) == SSHKey:
		return "the repository refused the project's deploy key: add `gradient-server admin project ssh-key show PROJECT`'s public key to its deploy keys"
	case ForURL(repoURL) == HTTPSToken && kind == None:
		return "the project has no https token: run `gradient-server admin project https-token set PROJECT --token-file FILE`"
	case ForURL(repoURL) == HTTPSToken:
		return "the repository refused the project's https token: check its scope and expiry, and set it again"
	}
	return "the repository refused access"
}
