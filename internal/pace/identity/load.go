package identity

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// State directory file names (pace-node §7.2).
const (
	KeyFile    = "node-key"
	NodeIDFile = "node-id"
)

// IDSource says where the node id came from, for the startup log line.
type IDSource uint8

// ID sources.
const (
	IDRecorded     IDSource = iota + 1 // read back from node-id
	IDMinted                           // minted now and recorded
	IDFromOverride                     // taken from --node-id and recorded
)

// Identity is a node's id and key as its state directory holds them.
type Identity struct {
	Dir       string
	NodeID    string
	Key       *Key
	KeyMinted bool     // the key was minted by this Load
	IDSource  IDSource // where NodeID came from
	// DirSyncsUnsupported counts directory fsyncs the filesystem refused
	// (pace_state_directory_syncs_unsupported_total).
	DirSyncsUnsupported int
}

// Options adjust Load.
type Options struct {
	// NodeID is --node-id: recorded when node-id is absent; a node-id file
	// that records another id refuses the start.
	NodeID string
	// Random is the source keys and ids are minted from; nil is crypto/rand.
	Random io.Reader
}

// Load reads the identity in dir, minting the key and the id when (and only
// when) their files are absent. Every refusal names the file or directory
// and the remedy.
func Load(dir string, opts Options) (*Identity, error) {
	return load(&stateDir{dir: dir, euid: processEUID()}, opts)
}

func load(s *stateDir, opts Options) (*Identity, error) {
	if opts.Random == nil {
		opts.Random = rand.Reader
	}
	if opts.NodeID != "" {
		if err := ValidateNodeID(opts.NodeID); err != nil {
			return nil, fmt.Errorf("--node-id: %w", err)
		}
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	unlock, err := lockDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot lock %s: %w", ErrUnusableStateDir, s.dir, err)
	}
	defer unlock()
	key, minted, err := loadKey(s, opts.Random)
	if err != nil {
		return nil, err
	}
	id, source, err := loadNodeID(s, opts)
	if err != nil {
		return nil, err
	}
	return &Identity{Dir: s.dir, NodeID: id, Key: key, KeyMinted: minted, IDSource: source,
		DirSyncsUnsupported: s.dirSyncUnsupported}, nil
}

// loadKey reads node-key, or mints it when absent. A racing minter that
// published first wins; its key is read back.
func loadKey(s *stateDir, random io.Reader) (*Key, bool, error) {
	s.sweepTemps(KeyFile)
	for attempt := 0; ; attempt++ {
		data, exists, err := s.read(KeyFile, true)
		if err != nil {
			return nil, false, err
		}
		if exists {
			key, err := decodeKeyFile(data)
			if err != nil {
				return nil, false, s.unusable(KeyFile, err.Error(),
					"restore it from a backup, or move it aside to mint a new identity (the cluster must then re-admit this node under its new key)")
			}
			return key, false, nil
		}
		key, err := NewKey(random)
		if err != nil {
			return nil, false, fmt.Errorf("mint %s: %w", s.path(KeyFile), err)
		}
		err = s.create(KeyFile, encodeKeyFile(key), 0o600)
		if errors.Is(err, errAlreadyExists) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		return key, true, nil
	}
}

// loadNodeID reads node-id, or records the override or a minted id.
func loadNodeID(s *stateDir, opts Options) (string, IDSource, error) {
	s.sweepTemps(NodeIDFile)
	for attempt := 0; ; attempt++ {
		data, exists, err := s.read(NodeIDFile, false)
		if err != nil {
			return "", 0, err
		}
		if exists {
			return recordedNodeID(s, data, opts.NodeID)
		}
		id, source := opts.NodeID, IDFromOverride
		if id == "" {
			if id, err = mintNodeID(opts.Random); err != nil {
				return "", 0, fmt.Errorf("mint %s: %w", s.path(NodeIDFile), err)
			}
			source = IDMinted
		}
		err = s.create(NodeIDFile, []byte(id+"\n"), 0o644)
		if errors.Is(err, errAlreadyExists) && attempt == 0 {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		return id, source, nil
	}
}

func recordedNodeID(s *stateDir, data []byte, override string) (string, IDSource, error) {
	id, err := decodeNodeIDFile(data)
	if err != nil {
		return "", 0, s.unusable(NodeIDFile, err.Error(), "restore the node's id into it, or move it aside to mint a new one")
	}
	if override != "" && override != id {
		return "", 0, fmt.Errorf("%w %s: it records node id %q but --node-id says %q; a node's id does not change under it: drop --node-id, or give this node a new state directory",
			ErrUnusableStateFile, s.path(NodeIDFile), id, override)
	}
	return id, IDRecorded, nil
}

// mintNodeID draws 128 random bits as 32 hex characters.
func mintNodeID(random io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoRandom, err)
	}
	return hex.EncodeToString(b[:]), nil
}

// LogLines are the two startup lines of pace-node §7.2.
func (id *Identity) LogLines() [2]string {
	keyHow := "recorded"
	if id.KeyMinted {
		keyHow = "newly minted"
	}
	idHow := map[IDSource]string{IDRecorded: "recorded", IDMinted: "newly minted", IDFromOverride: "from --node-id, recorded"}[id.IDSource]
	return [2]string{
		fmt.Sprintf("identity key %s (%s)", id.Key.PublicText(), keyHow),
		fmt.Sprintf("node identity %s (%s)", id.NodeID, idHow),
	}
}
