package identity

import (
	"errors"
	"os"
	"path/filepath"
)

// MachineStateDir is the state directory of a privileged (root) node.
const MachineStateDir = "/var/lib/pace-node"

// Reasons DefaultStateDir gives, shown by --print-surfaces and NODE-STATUS.
const (
	ReasonMachineWide = "machine-wide: this process is privileged, so it holds the machine's service identity"
	ReasonPerUser     = "per-user: this process is not privileged, so it keeps its identity apart from the machine's service"
)

// ErrNoStateDir: no default state directory can be named.
var ErrNoStateDir = errors.New("no default state directory: set --cluster-dir, XDG_STATE_HOME or HOME")

// DefaultStateDir is where this process keeps its identity when
// --cluster-dir is not given, and why.
func DefaultStateDir() (dir, reason string, err error) {
	return defaultStateDir(processEUID(), os.Getenv)
}

// defaultStateDir: /var/lib/pace-node as root; else $XDG_STATE_HOME/pace-node
// (an absolute XDG_STATE_HOME only, as the XDG spec requires) or
// $HOME/.local/state/pace-node.
func defaultStateDir(euid int, getenv func(string) string) (string, string, error) {
	if euid == 0 {
		return MachineStateDir, ReasonMachineWide, nil
	}
	if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "pace-node"), ReasonPerUser, nil
	}
	if home := getenv("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "pace-node"), ReasonPerUser, nil
	}
	return "", "", ErrNoStateDir
}
