package argvet

// Family is a driver family: the introducers and table rows its arguments use
// (pace-wire §3.2).
type Family uint8

// Driver families.
const (
	FamilyUnknown Family = iota
	FamilyGNU            // gcc, g++, cc, c++, clang, clang++: '-' introduces an option
	FamilyMSVC           // cl, clang-cl: '/' or '-' introduces an option
)

func (f Family) String() string {
	switch f {
	case FamilyGNU:
		return "gnu"
	case FamilyMSVC:
		return "msvc"
	}
	return "unknown"
}

// Flavor is the driver within its family. The worker's flavor decides whether --target= is
// accepted (clang drivers only).
type Flavor uint8

// Driver flavors.
const (
	FlavorUnknown Flavor = iota
	FlavorGcc
	FlavorClang
	FlavorCl
	FlavorClangCl
)

func (f Flavor) String() string {
	switch f {
	case FlavorGcc:
		return "gcc"
	case FlavorClang:
		return "clang"
	case FlavorCl:
		return "cl"
	case FlavorClangCl:
		return "clang-cl"
	}
	return "unknown"
}

// Family returns the flavor's family.
func (f Flavor) Family() Family {
	switch f {
	case FlavorGcc, FlavorClang:
		return FamilyGNU
	case FlavorCl, FlavorClangCl:
		return FamilyMSVC
	}
	return FamilyUnknown
}

// IsClang reports whether the driver is clang's (clang, clang++, clang-cl).
func (f Flavor) IsClang() bool { return f == FlavorClang || f == FlavorClangCl }

// PreprocessedLanguages returns the spellings that tell the flavor's driver its input is
// already preprocessed: GNU takes them as the value of -x, MSVC as whole arguments.
func (f Flavor) PreprocessedLanguages() []string {
	switch f.Family() {
	case FamilyGNU:
		return []string{"cpp-output", "c++-cpp-output", "objective-c-cpp-output", "objective-c++-cpp-output"}
	case FamilyMSVC:
		return []string{"/TC", "/TP", "-TC", "-TP"}
	}
	return nil
}

// introducerLen returns the length of the option introducer arg starts with in family f, or 0
// when it has none.
func introducerLen(f Family, arg string) int {
	if arg == "" {
		return 0
	}
	switch f {
	case FamilyGNU:
		if arg[0] == '-' {
			return 1
		}
	case FamilyMSVC:
		if arg[0] == '-' || arg[0] == '/' {
			return 1
		}
	}
	return 0
}
