package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/buildfleet/buildfleet"

type listedPackage struct {
	ImportPath string
	Name       string
	Doc        string
	Deps       []string
	// TestImports and XTestImports are what the package's tests import besides.
	TestImports  []string
	XTestImports []string
}

// goList runs `go list -json` over patterns and decodes its stream of package objects.
func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range goList(t, "./...") {
		if p.Name == "main" {
			if p.Doc == "" {
				t.Errorf("%s: command has no doc comment", p.ImportPath)
			}
			continue
		}
		if !strings.HasPrefix(p.Doc, "Package "+p.Name) {
			t.Errorf("%s: package doc comment missing or not starting with %q", p.ImportPath, "Package "+p.Name)
		}
	}
}

// TestPaceAndGradientNeverImportEachOther: no package of one system, command or load
// generator depends on the other system, and neither do its tests.
func TestPaceAndGradientNeverImportEachOther(t *testing.T) {
	for _, p := range goList(t, "./...") {
		own, other := systemOf(p.ImportPath), ""
		if own == "" {
			continue
		}
		other = map[string]string{"pace": "gradient", "gradient": "pace"}[own]
		for _, d := range slices.Concat(p.Deps, p.TestImports, p.XTestImports) {
			if systemOf(d) == other {
				t.Errorf("%s (a %s package) depends on %s", p.ImportPath, own, d)
			}
		}
	}
}

// systemOf names the system an import path belongs to, or "" for shared and outside code:
// internal/<system>/... by its path, a main package by its row in commands.
func systemOf(path string) string {
	for _, sys := range []string{"pace", "gradient"} {
		if strings.HasPrefix(path, module+"/internal/"+sys+"/") {
			return sys
		}
	}
	return commands[strings.TrimPrefix(path, module+"/")]
}
