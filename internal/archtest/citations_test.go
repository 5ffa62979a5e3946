package archtest

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the module's top directory, where go.mod and docs/ live.
const repoRoot = "../.."

// thisFile is skipped by the phrase checks: its patterns spell the phrases they look for.
const thisFile = "internal/archtest/citations_test.go"

// The section sign is written as an escape here so that this file holds none itself.
const sectionSign = "\u00a7"

var (
	// citation is one reference: a document name, one space, the sign, a section number.
	citation = regexp.MustCompile(`([a-z][a-z0-9-]*) ` + sectionSign + `(\d+(?:\.\d+)*)`)
	// heading is a Markdown heading whose first word is a section number ("## 1.12 Opcodes",
	// "### 7.3.1 Challenge", "## 4. Numbers").
	heading = regexp.MustCompile(`^#{1,6} +(\d+(?:\.\d+)*)\.? `)
)

// forbidden are phrases that point outside the repository, or at something a reader of the
// repository cannot follow. Each check names what to write instead.
var forbidden = []struct {
	re   *regexp.Regexp
	hint string
}{
	{regexp.MustCompile(`\.\./shared`), "nothing in the repository reads or links outside the clone"},
	{regexp.MustCompile(`(?i)\bspec ` + sectionSign), "cite a design document by name: <doc> " + sectionSign + "N"},
	{regexp.MustCompile(`(?i)\bmission\b`), "state the reason, or cite a design document"},
	{regexp.MustCompile(`(?i)\bissues? #?[0-9]`), "state the reason, or cite a design document"},
}

// citedFiles are the files whose citations must resolve: every Go file, the scripts, the
// Makefile and the SQL migrations.
func citedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".go"), strings.HasSuffix(rel, ".sql"), rel == "Makefile",
			filepath.Dir(rel) == "scripts" && strings.HasSuffix(rel, ".sh"):
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the repository: %v", err)
	}
	return files
}

// sections reads the section numbers of docs/<name>.md; ok is false when there is no such
// document.
func sections(name string) (nums map[string]bool, ok bool) {
	f, err := os.Open(filepath.Join(repoRoot, "docs", name+".md"))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	nums = map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			nums[m[1]] = true
		}
	}
	return nums, true
}

// resolves reports whether section n exists in a document: a heading numbered exactly n, or
// n is a section whose subsections exist (citing "3" when the document has "3.1").
func resolves(nums map[string]bool, n string) bool {
	if nums[n] {
		return true
	}
	for h := range nums {
		if strings.HasPrefix(h, n+".") {
			return true
		}
	}
	return false
}

// TestCitationsResolve: every section sign in the code is a citation of the form
// "<doc> <sign>N" whose document is docs/<doc>.md and whose section N is a heading there, and
// no file points outside the repository or at an issue.
func TestCitationsResolve(t *testing.T) {
	docs := map[string]map[string]bool{}
	var bad []string
	for _, rel := range citedFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, rel))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			where := fmt.Sprintf("%s:%d", rel, i+1)
			bad = append(bad, badCitations(where, line, docs)...)
			if rel == thisFile {
				continue
			}
			for _, f := range forbidden {
				if loc := f.re.FindString(line); loc != "" {
					bad = append(bad, fmt.Sprintf("%s: %q: %s", where, loc, f.hint))
				}
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d citations that do not resolve to docs/ or point outside the repository (write <doc> %sN, N a heading of docs/<doc>.md):\n%s",
			len(bad), sectionSign, strings.Join(bad, "\n"))
	}
}

// badCitations checks every section sign on one line.
func badCitations(where, line string, docs map[string]map[string]bool) []string {
	var bad []string
	found := citation.FindAllStringSubmatchIndex(line, -1)
	signs := strings.Count(line, sectionSign)
	if signs > len(found) {
		bad = append(bad, fmt.Sprintf("%s: %d of %d section signs are not \"<doc> %sN\": %s",
			where, signs-len(found), signs, sectionSign, strings.TrimSpace(line)))
	}
	for _, m := range found {
		doc, n := line[m[2]:m[3]], line[m[4]:m[5]]
		nums, seen := docs[doc]
		if !seen {
			nums, _ = sections(doc)
			docs[doc] = nums
		}
		switch {
		case nums == nil:
			bad = append(bad, fmt.Sprintf("%s: %s %s%s: there is no docs/%s.md", where, doc, sectionSign, n, doc))
		case !resolves(nums, n):
			bad = append(bad, fmt.Sprintf("%s: %s %s%s: docs/%s.md has no section %s", where, doc, sectionSign, n, doc, n))
		}
	}
	return bad
}

// TestDocsStandAlone: the design documents and the README link nothing outside the clone,
// and no document numbers two sections alike (so "<doc> <sign>N" names one place).
func TestDocsStandAlone(t *testing.T) {
	mds, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(mds) == 0 {
		t.Fatalf("no design documents under docs/: %v", err)
	}
	outside := regexp.MustCompile(`\.\./shared|shared/(spec|seeds)`)
	for _, path := range append(mds, filepath.Join(repoRoot, "README.md")) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, path)
		var numbered []string
		for i, line := range strings.Split(string(data), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d points outside the repository: %s", rel, i+1, line)
			}
			if m := heading.FindStringSubmatch(line); m != nil {
				if slices.Contains(numbered, m[1]) {
					t.Errorf("%s:%d: section %s is numbered twice", rel, i+1, m[1])
				}
				numbered = append(numbered, m[1])
			}
		}
	}
}
