package argvet

var (
	gnuAllow = newAllowTable(
		gnuOptimisation, gnuLanguage, gnuDefines, gnuWarnings, gnuMachine, gnuDebug,
		gnuFBare, gnuFValued, gnuParam, gnuMisc,
	)
	msvcAllow = newAllowTable(
		msvcOptimisation, msvcLanguage, msvcDefines, msvcWarnings, msvcMachine, msvcCodegen,
		msvcMisc,
	)
)

// allowTableFor returns the family's allowlist, nil for an unknown family (which accepts
// nothing).
func allowTableFor(f Family) *allowTable {
	switch f {
	case FamilyGNU:
		return &gnuAllow
	case FamilyMSVC:
		return &msvcAllow
	}
	return nil
}
