package consensus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/fleet"
)

// FormationFile is the formation record's name in the state directory.
const FormationFile = "formation"

// formationHeader is the record's first line; its number is the format
// version. A later format adds keys and bumps the number, and an older
// build refuses the newer record by name instead of misreading it.
const formationHeader = "pace-formation 1"

// maxFormationLen bounds the record: it is a handful of short lines.
const maxFormationLen = 4096

// Mode is the node's place in a fleet (pace-node §1.2), read from the formation
// record, never from a flag.
type Mode string

// Modes.
const (
	Solitary Mode = "solitary" // the cluster of one this node founded
	Pending  Mode = "pending"  // still its own cluster of one, asking a fleet to admit it
	Voter    Mode = "voter"    // a voter of a fleet (a founder becomes one when its fleet grows)
	Learner  Mode = "learner"  // replicated to, votes never; dials every voter
)

func (m Mode) valid() bool {
	return m == Solitary || m == Pending || m == Voter || m == Learner
}

// founds reports whether a node in this mode founds its own cluster when its
// Raft store is empty (solitary and pending lead a cluster of their own; a
// voter or learner of a fleet waits for that fleet's leader).
func (m Mode) founds() bool { return m == Solitary || m == Pending }

// Formation is the formation record.
type Formation struct {
	Mode      Mode
	ClusterID string
	// CreatedAt is when this node minted its cluster (unix seconds); 0 when not recorded (a
	// record from before it was kept, or a cluster this node joined). Discovery's encounter
	// table uses it: of two clusters of one, the younger yields (pace-node §9.2).
	CreatedAt int64
}

// ErrFormation reports a formation record that cannot be used.
var ErrFormation = errors.New("formation record unusable")

// ReadFormation reads <dir>/formation; exists is false when there is none.
func ReadFormation(dir string) (f Formation, exists bool, err error) {
	path := filepath.Join(dir, FormationFile)
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Formation{}, false, nil
	}
	if err != nil {
		return Formation{}, false, fmt.Errorf("%w: %s: %v", ErrFormation, path, err)
	}
	defer file.Close()
	raw, err := io.ReadAll(io.LimitReader(file, maxFormationLen+1))
	if err != nil {
		return Formation{}, true, fmt.Errorf("%w: %s: %v", ErrFormation, path, err)
	}
	f, err = parseFormation(raw)
	if err != nil {
		return Formation{}, true, fmt.Errorf("%w: %s: %v", ErrFormation, path, err)
	}
	return f, true, nil
}

func parseFormation(raw []byte) (Formation, error) {
	if len(raw) > maxFormationLen {
		return Formation{}, fmt.Errorf("longer than %d bytes", maxFormationLen)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	if !sc.Scan() || sc.Text() != formationHeader {
		return Formation{}, fmt.Errorf("first line is not %q (written by another version?)", formationHeader)
	}
	var f Formation
	seen := map[string]bool{}
	for line := 2; sc.Scan(); line++ {
		key, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || seen[key] {
			return Formation{}, fmt.Errorf("line %d: want one \"key value\" per key", line)
		}
		seen[key] = true
		switch key {
		case "mode":
			f.Mode = Mode(value)
		case "cluster-id":
			f.ClusterID = value
		case "created":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				return Formation{}, fmt.Errorf("line %d: created %q is not unix seconds", line, value)
			}
			f.CreatedAt = n
		default:
			return Formation{}, fmt.Errorf("line %d: unknown key %q", line, key)
		}
	}
	if !f.Mode.valid() {
		return Formation{}, fmt.Errorf("mode %q is none of solitary, pending, voter, learner", f.Mode)
	}
	if err := fleet.CheckClusterID(f.ClusterID); err != nil {
		return Formation{}, err
	}
	return f, nil
}

func (f Formation) encode() []byte {
	b := formationHeader + "\nmode " + string(f.Mode) + "\ncluster-id " + f.ClusterID + "\n"
	if f.CreatedAt > 0 {
		b += "created " + strconv.FormatInt(f.CreatedAt, 10) + "\n"
	}
	return []byte(b)
}

// WriteFormation replaces <dir>/formation atomically and durably: a
// temporary file, fsynced, renamed over the record, then the directory
// fsynced. A crash leaves the old record or the new one, never a mix.
func WriteFormation(dir string, f Formation) error {
	if _, err := parseFormation(f.encode()); err != nil {
		return fmt.Errorf("%w: refusing to write it: %v", ErrFormation, err)
	}
	path := filepath.Join(dir, FormationFile)
	tmp, err := os.CreateTemp(dir, FormationFile+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(f.encode())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
