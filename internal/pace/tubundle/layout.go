package tubundle

import (
	"bytes"
	"strings"
)

// Directories under the worker's job directory, which is the compiler's working directory:
// the regions of user headers (and of the main file) where -iquote finds them, those of
// system headers where -isystem does. The original files go under pace-f/.
const (
	UserDir   = "q"
	SystemDir = "s"
)

// ScratchToken stands for the worker's job directory in the diagnostics it returns; the
// client cannot map it, so a diagnostic holding it is not replayed.
const ScratchToken = "<pace-worker-scratch>"

// Write is one file a worker writes for a bundle, relative to its job directory.
type Write struct {
	Path string
	Data []byte
}

// Layout is what a worker does with a screened bundle: the directories to make and the
// files to write, relative to the job directory; the options to add to the compiler's
// (-nostdinc so that no system directory is searched and no stdc-predef.h is preincluded
// twice, the two include directories, each forced include, and a prefix map from each
// synthetic name to the names a local compile records); and the main input to compile.
func Layout(b *Bundle) (dirs []string, writes []Write, args []string, input string) {
	dirs = []string{UserDir + "/pace-r", SystemDir + "/pace-r"}
	for i, r := range b.Regions {
		dir := UserDir
		if r.System {
			dir = SystemDir
		}
		writes = append(writes, Write{Path: dir + "/" + RegionName(i), Data: r.Text})
	}
	input = UserDir + "/" + RegionName(0)
	args = []string{"-nostdinc", "-iquote", UserDir, "-isystem", SystemDir}
	for _, f := range b.Forced {
		args = append(args, "-include", RegionName(f))
	}
	args = append(args, nameMaps(input, b.Source)...)
	for i, f := range b.Files {
		name := FileName(i, f.Base)
		args = append(args, nameMaps(name, f)...)
		if f.HasContent {
			dirs = append(dirs, name[:strings.LastIndexByte(name, '/')])
			writes = append(writes, Write{Path: name, Data: f.Content})
		}
	}
	return dirs, writes, args, input
}

// nameMaps map a synthetic name (which no other name the compiler sees starts with) to the
// names f records: one -ffile-prefix-map when they agree.
func nameMaps(synthetic string, f File) []string {
	if f.Debug == f.Macro {
		return []string{"-ffile-prefix-map=" + synthetic + "=" + f.Debug}
	}
	return []string{"-fdebug-prefix-map=" + synthetic + "=" + f.Debug, "-fmacro-prefix-map=" + synthetic + "=" + f.Macro}
}

// sourceLanguages are the languages a bundle compiles as, by the preprocessed spelling the
// client sends.
var sourceLanguages = map[string]string{
	"cpp-output": "c", "c++-cpp-output": "c++",
	"objective-c-cpp-output": "objective-c", "objective-c++-cpp-output": "objective-c++",
}

// SourceLanguage rewrites the vetted arguments' preprocessed language (-x cpp-output, or
// -xcpp-output) to the source language a bundle is compiled as; ok is false when they name
// none.
func SourceLanguage(args []string) (out []string, ok bool) {
	out = append([]string(nil), args...)
	for i, a := range out {
		switch {
		case a == "-x" && i+1 < len(out) && sourceLanguages[out[i+1]] != "":
			out[i+1], ok = sourceLanguages[out[i+1]], true
		case strings.HasPrefix(a, "-x") && sourceLanguages[a[2:]] != "":
			out[i], ok = "-x"+sourceLanguages[a[2:]], true
		}
	}
	return out, ok
}

// inexactMark opens the line MarkInexact adds.
const inexactMark = "<pace-worker-inexact: "

// MarkInexact appends to non-empty diagnostics a line saying why they are not what the
// client's compiler prints (a locale the worker lacks); Localize then refuses them, and the
// object, which does not depend on it, still lands when there are none.
func MarkInexact(stderr []byte, why string) []byte {
	if len(stderr) == 0 {
		return stderr
	}
	return append(append(append(stderr, inexactMark...), why...), ">\n"...)
}

// Scrub replaces the job directory in the worker's diagnostics with ScratchToken.
func Scrub(stderr []byte, jobDir string) []byte {
	if jobDir == "" || !bytes.Contains(stderr, []byte(jobDir)) {
		return stderr
	}
	return bytes.ReplaceAll(stderr, []byte(jobDir), []byte(ScratchToken))
}
