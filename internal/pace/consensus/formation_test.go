package consensus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testCluster = "0123456789abcdef0123456789abcdef"

func TestFormationRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, exists, err := ReadFormation(dir); exists || err != nil {
		t.Fatalf("empty directory: exists %v, %v", exists, err)
	}
	for _, mode := range []Mode{Solitary, Pending, Voter, Learner} {
		want := Formation{Mode: mode, ClusterID: testCluster}
		if err := WriteFormation(dir, want); err != nil {
			t.Fatal(err)
		}
		got, exists, err := ReadFormation(dir)
		if err != nil || !exists || got != want {
			t.Fatalf("read back %+v, %v, %v; want %+v", got, exists, err, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("writes left %d files (temporary files behind?)", len(entries))
	}
	info, _ := os.Stat(filepath.Join(dir, FormationFile))
	if info.Mode().Perm()&0o077 != 0 {
		t.Fatalf("formation record mode %v is readable by others", info.Mode())
	}
}

func TestFormationRefusals(t *testing.T) {
	cases := map[string]string{
		"no header":       "mode solitary\ncluster-id " + testCluster + "\n",
		"newer version":   "pace-formation 2\nmode solitary\ncluster-id " + testCluster + "\n",
		"unknown mode":    "pace-formation 1\nmode founder\ncluster-id " + testCluster + "\n",
		"unknown key":     "pace-formation 1\nmode solitary\ncluster-id " + testCluster + "\nleader n1\n",
		"duplicate key":   "pace-formation 1\nmode solitary\nmode voter\ncluster-id " + testCluster + "\n",
		"bad cluster id":  "pace-formation 1\nmode solitary\ncluster-id xyz\n",
		"missing cluster": "pace-formation 1\nmode solitary\n",
		"not key value":   "pace-formation 1\nsolitary\n",
		"oversized":       "pace-formation 1\n" + strings.Repeat("#", maxFormationLen),
		"empty":           "",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FormationFile)
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, exists, err := ReadFormation(dir)
			if !exists || !errors.Is(err, ErrFormation) || !strings.Contains(err.Error(), path) {
				t.Fatalf("ReadFormation = exists %v, %v; want ErrFormation naming %s", exists, err, path)
			}
		})
	}
	if err := WriteFormation(t.TempDir(), Formation{Mode: "founder", ClusterID: testCluster}); !errors.Is(err, ErrFormation) {
		t.Fatalf("writing an invalid record: %v", err)
	}
}
