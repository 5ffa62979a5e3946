package ccargs

import "github.com/buildfleet/buildfleet/internal/pace/argvet"

// shortForm is how gcc reads a "--name" option; see argvet.GNUShortForm.
func shortForm(a string) string { return argvet.GNUShortForm(a) }

// checkMachineValue reads --machine X as -mX.
func checkMachineValue(v string) Reason {
	if isNativeCPU("-m" + v) {
		return ReasonHostCPU
	}
	return ""
}
