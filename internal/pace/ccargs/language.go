package ccargs

import "strings"

// Language is what the driver compiles an input as.
type Language uint8

// Languages. The first five are cacheable; the rest name why an input is not.
const (
	LangNone Language = iota
	LangC
	LangCXX
	LangObjC
	LangObjCXX
	LangAsmCpp // assembler-with-cpp (.S, .sx): preprocessable, so its key probe sees its text
	LangAsm    // plain assembler (.s): the preprocessor would output nothing to key on
	LangCPreprocessed
	LangCXXPreprocessed
	LangObjCPreprocessed
	LangObjCXXPreprocessed
	LangCHeader
	LangCXXHeader
	LangObjCHeader
	LangObjCXXHeader
	LangModuleInterface
	LangOther // a -x language this package does not handle
)

// xNames are the -x spellings of the GNU drivers.
var xNames = map[string]Language{
	"c": LangC, "c++": LangCXX, "objective-c": LangObjC, "objective-c++": LangObjCXX,
	"assembler-with-cpp": LangAsmCpp, "assembler": LangAsm,
	"cpp-output": LangCPreprocessed, "c++-cpp-output": LangCXXPreprocessed,
	"objective-c-cpp-output": LangObjCPreprocessed, "objc-cpp-output": LangObjCPreprocessed,
	"objective-c++-cpp-output": LangObjCXXPreprocessed, "objc++-cpp-output": LangObjCXXPreprocessed,
	"c-header": LangCHeader, "c++-header": LangCXXHeader, "objective-c-header": LangObjCHeader,
	"objective-c++-header": LangObjCXXHeader, "c++-system-header": LangCXXHeader,
	"c++-user-header": LangCXXHeader, "c++-module": LangModuleInterface,
}

// langNames are the canonical -x spellings, indexed by Language.
var langNames = [...]string{
	LangNone: "none", LangC: "c", LangCXX: "c++", LangObjC: "objective-c",
	LangObjCXX: "objective-c++", LangAsmCpp: "assembler-with-cpp", LangAsm: "assembler",
	LangCPreprocessed: "cpp-output", LangCXXPreprocessed: "c++-cpp-output",
	LangObjCPreprocessed: "objective-c-cpp-output", LangObjCXXPreprocessed: "objective-c++-cpp-output",
	LangCHeader: "c-header", LangCXXHeader: "c++-header", LangObjCHeader: "objective-c-header",
	LangObjCXXHeader: "objective-c++-header", LangModuleInterface: "c++-module", LangOther: "other",
}

// String is the language's canonical -x spelling.
func (l Language) String() string {
	if int(l) < len(langNames) {
		return langNames[l]
	}
	return "other"
}

// languageFromX maps a -x value; "none" returns LangNone (back to extensions).
func languageFromX(name string) Language {
	if name == "none" {
		return LangNone
	}
	if l, ok := xNames[name]; ok {
		return l
	}
	return LangOther
}

// extLanguages follow GCC's suffix table (case-sensitive: .C is C++, .c is C).
var extLanguages = map[string]Language{
	"c": LangC, "i": LangCPreprocessed, "m": LangObjC, "mi": LangObjCPreprocessed,
	"mm": LangObjCXX, "M": LangObjCXX, "mii": LangObjCXXPreprocessed,
	"cc": LangCXX, "cp": LangCXX, "cxx": LangCXX, "cpp": LangCXX, "CPP": LangCXX, "c++": LangCXX,
	"C": LangCXX, "ii": LangCXXPreprocessed,
	"s": LangAsm, "S": LangAsmCpp, "sx": LangAsmCpp,
	"h": LangCHeader, "hh": LangCXXHeader, "H": LangCXXHeader, "hp": LangCXXHeader,
	"hxx": LangCXXHeader, "hpp": LangCXXHeader, "HPP": LangCXXHeader, "h++": LangCXXHeader,
	"tcc": LangCXXHeader,
	"ixx": LangModuleInterface, "cppm": LangModuleInterface, "ccm": LangModuleInterface,
	"cxxm": LangModuleInterface, "c++m": LangModuleInterface, "mxx": LangModuleInterface,
}

// extension returns the suffix after the last '.' of path's last component, "" when none.
func extension(path string) string {
	base := path[strings.LastIndexByte(path, '/')+1:]
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return ""
	}
	return base[i+1:]
}

// languageFromExt is the language a driver gives an input without -x; ok is false for a
// suffix the drivers treat as a linker input. A C++ driver compiles .c as C++ and .i as
// preprocessed C++ (checked against g++ 12).
func languageFromExt(path string, cxxDriver bool) (Language, bool) {
	l, ok := extLanguages[extension(path)]
	if !ok {
		return LangNone, false
	}
	if cxxDriver {
		switch l {
		case LangC:
			return LangCXX, true
		case LangCPreprocessed:
			return LangCXXPreprocessed, true
		case LangCHeader:
			return LangCXXHeader, true
		}
	}
	return l, true
}

// cacheable reports whether the key probe can preprocess the language.
func (l Language) cacheable() bool { return l >= LangC && l <= LangAsmCpp }

// notCacheableReason says why inputs of l pass through.
func (l Language) notCacheableReason() Reason {
	switch l {
	case LangAsm:
		return ReasonAssemblerInput
	case LangCPreprocessed, LangCXXPreprocessed, LangObjCPreprocessed, LangObjCXXPreprocessed:
		return ReasonPreprocessedInput
	case LangCHeader, LangCXXHeader, LangObjCHeader, LangObjCXXHeader:
		return ReasonPrecompiledHeader
	case LangModuleInterface:
		return ReasonModuleInterface
	}
	return ReasonUnsupportedLang
}

// PreprocessedSpelling is the -x value that tells a GNU driver an input of l is already
// preprocessed (pace-wire §3.9.1); "" for languages that cannot be dispatched.
func (l Language) PreprocessedSpelling() string {
	switch l {
	case LangC:
		return "cpp-output"
	case LangCXX:
		return "c++-cpp-output"
	case LangObjC:
		return "objective-c-cpp-output"
	case LangObjCXX:
		return "objective-c++-cpp-output"
	}
	return ""
}
