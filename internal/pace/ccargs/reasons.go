package ccargs

import (
	"errors"
	"fmt"
)

// Reason is a short, stable label for why a command line passes through uncached; pace-cc
// counts uncacheable calls by it, so the strings never change meaning.
type Reason string

// Reasons a command line passes through.
const (
	ReasonNotCompiler       Reason = "not a compiler"
	ReasonMSVCDriver        Reason = "msvc driver unsupported"
	ReasonLink              Reason = "link"
	ReasonPreprocessOnly    Reason = "preprocess only"
	ReasonNotListing        Reason = "not a dependency listing"
	ReasonListingShape      Reason = "dependency listing shape"
	ReasonSyntaxOnly        Reason = "syntax only"
	ReasonStaticAnalysis    Reason = "static analysis"
	ReasonNoSource          Reason = "no source"
	ReasonMultipleSources   Reason = "multiple sources"
	ReasonNonSourceInput    Reason = "non-source input"
	ReasonStdinSource       Reason = "stdin source"
	ReasonNoOutput          Reason = "no output"
	ReasonMultipleOutputs   Reason = "multiple outputs"
	ReasonOutputToStdout    Reason = "output to stdout"
	ReasonMissingValue      Reason = "missing option value"
	ReasonResponseFile      Reason = "response file"
	ReasonUnsupportedLang   Reason = "unsupported language"
	ReasonAssemblerInput    Reason = "assembler input"
	ReasonPreprocessedInput Reason = "preprocessed input"
	ReasonPrecompiledHeader Reason = "precompiled header"
	ReasonModuleInterface   Reason = "module interface"
	ReasonModules           Reason = "modules"
	ReasonModuleOutput      Reason = "module output"
	ReasonPrecompile        Reason = "precompile"
	ReasonSaveTemps         Reason = "save-temps"
	ReasonDumps             Reason = "dump files"
	ReasonDumpNaming        Reason = "dump naming"
	ReasonSplitDwarf        Reason = "split dwarf"
	ReasonCoverage          Reason = "coverage"
	ReasonProfile           Reason = "profile"
	ReasonStackUsage        Reason = "stack usage"
	ReasonCallgraphInfo     Reason = "callgraph info"
	ReasonAuxInfo           Reason = "aux info"
	ReasonTimeTrace         Reason = "time trace"
	ReasonOptRecord         Reason = "optimization record"
	ReasonCompilationDB     Reason = "compilation database"
	ReasonSerializedDiags   Reason = "serialized diagnostics"
	ReasonCompareDebug      Reason = "compare debug"
	ReasonSecondOutput      Reason = "second output"
	ReasonMultipleArch      Reason = "multiple -arch"
	ReasonXclang            Reason = "unsupported -Xclang"
	ReasonToolPassthrough   Reason = "tool passthrough option"
	ReasonPreprocessorOpt   Reason = "preprocessor passthrough option"
	ReasonAssemblerOutput   Reason = "assembler output file"
	ReasonToolchainRedirect Reason = "toolchain redirection"
	ReasonPlugin            Reason = "compiler plugin"
	ReasonConfigFile        Reason = "config file"
	ReasonWorkingDirectory  Reason = "working directory option"
	ReasonVFSOverlay        Reason = "vfs overlay"
	ReasonInstrumentList    Reason = "instrumentation list file"
	ReasonHostCPU           Reason = "host cpu (native)"
	ReasonDepWithoutMD      Reason = "dependency flags without -MD/-MMD"
	ReasonDepMissingHeaders Reason = "-MG"
	ReasonDepToStdout       Reason = "depfile to stdout"
	ReasonInformation       Reason = "information query"
	ReasonVerbose           Reason = "verbose"
	ReasonStatistics        Reason = "compiler statistics"
	ReasonHeaderTrace       Reason = "header trace"
	ReasonPreprocessorMode  Reason = "preprocessor mode"
	ReasonAmbiguousToken    Reason = "path spells a root token"
	ReasonUnsupportedOption Reason = "unsupported option"
)

// ErrPassthrough is what every PassthroughError matches: the command runs uncached.
var ErrPassthrough = errors.New("passthrough")

// PassthroughError says why a command line is not cached. Arg is the argument that decided
// it, when one did.
type PassthroughError struct {
	Reason Reason
	Arg    string
}

func (e *PassthroughError) Error() string {
	if e.Arg == "" {
		return fmt.Sprintf("passthrough: %s", e.Reason)
	}
	return fmt.Sprintf("passthrough: %s (%q)", e.Reason, e.Arg)
}

// Unwrap makes every PassthroughError match ErrPassthrough.
func (e *PassthroughError) Unwrap() error { return ErrPassthrough }

func passthrough(r Reason, arg string) *PassthroughError {
	return &PassthroughError{Reason: r, Arg: arg}
}

// ReasonOf returns the reason carried by err, "" when err is not a passthrough.
func ReasonOf(err error) Reason {
	var pe *PassthroughError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ""
}
