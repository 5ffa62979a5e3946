package nixexec

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Markers of Nix's export format (nix-store --export / --import).
const (
	exportNext  = 1          // another path follows
	exportEnd   = 0          // no more paths
	exportMagic = 0x4558494e // "NIXE", after each NAR
)

// MaxDecoderMemory caps the zstd decoder's memory for pulled NARs, which come from the
// network (the architecture's rule: always cap decoder memory for peer input).
const MaxDecoderMemory = 256 << 20

var (
	// ErrNarHashMismatch: a pulled NAR did not hash to the nar_hash the cache announced.
	ErrNarHashMismatch = errors.New("nixexec: NAR hash mismatch")
	// ErrImportCycle: the references of the paths to import form a cycle.
	ErrImportCycle = errors.New("nixexec: reference cycle among imported paths")
)

// ImportItem is one pulled path to import.
type ImportItem struct {
	Path       string
	References []string // full store paths (hash-name forms are completed with /nix/store)
	Deriver    string   // full .drv path or ""
	// NarHash, when set, is checked against the decompressed NAR before the path is
	// registered: a mismatch aborts the import, so a corrupt NAR is never made valid.
	NarHash []byte
	// NarSize, when positive, is the NAR's size: decompression stops one byte past it and a
	// NAR of another size aborts the import.
	NarSize int64
	// Compression is how Open's bytes are compressed: "" or "zstd" (gradient's caches), or
	// "xz", "bzip2" or "none" (upstream caches).
	Compression string
	// Open returns the compressed NAR.
	Open func() (io.ReadCloser, error)
}

// Import imports items into the store with one `nix-store --import`, in topological order
// of their references (a path is registered only when its references are valid). Each NAR
// is decompressed on the way; memory stays bounded by the decoder window.
func (n *Nix) Import(ctx context.Context, items []ImportItem) error {
	if len(items) == 0 {
		return nil
	}
	ordered, err := ImportOrder(items)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	writeErr := make(chan error, 1)
	go func() {
		err := writeExport(pw, ordered)
		pw.CloseWithError(err)
		writeErr <- err
	}()
	runErr := n.run(ctx, invocation{name: "nix-store", args: n.storeArgs("--import"), stdin: pr})
	pr.CloseWithError(io.ErrClosedPipe) // unblock the writer if nix stopped reading early
	if werr := <-writeErr; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return fmt.Errorf("nixexec: import: %w", werr)
	}
	if runErr != nil {
		return fmt.Errorf("nixexec: import: %w", runErr)
	}
	return nil
}

// ImportOrder sorts items so that each comes after the items it references (references
// outside the set are assumed valid already). Ties keep a stable path order.
func ImportOrder(items []ImportItem) ([]ImportItem, error) {
	byPath := make(map[string]int, len(items))
	for i, it := range items {
		byPath[it.Path] = i
	}
	state := make([]uint8, len(items)) // 0 new, 1 visiting, 2 done
	order := make([]ImportItem, 0, len(items))
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case 1:
			return fmt.Errorf("%w: at %s", ErrImportCycle, items[i].Path)
		case 2:
			return nil
		}
		state[i] = 1
		refs := slices.Sorted(slices.Values(items[i].References))
		for _, r := range refs {
			if j, ok := byPath[FullStorePath(r)]; ok && j != i {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		order = append(order, items[i])
		return nil
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(items[a].Path, items[b].Path) })
	for _, i := range idx {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// FullStorePath completes a hash-name reference with the store directory.
func FullStorePath(ref string) string {
	if strings.HasPrefix(ref, "/") {
		return ref
	}
	return StoreDir + "/" + ref
}

// StoreDir is the store directory gradient's paths live in.
const StoreDir = "/nix/store"

// writeExport writes the export stream of items, ending with the end marker.
func writeExport(w io.Writer, items []ImportItem) error {
	dec, err := newDecompressor()
	if err != nil {
		return err
	}
	defer dec.Close()
	for _, it := range items {
		if err := writeExportItem(w, dec, it); err != nil {
			return fmt.Errorf("%s: %w", it.Path, err)
		}
	}
	return writeU64(w, exportEnd)
}

func writeExportItem(w io.Writer, dec *decompressor, it ImportItem) error {
	rc, err := it.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	nar, err := dec.reader(rc, it.Compression)
	if err != nil {
		return err
	}
	if it.NarSize > 0 {
		nar = io.LimitReader(nar, it.NarSize+1)
	}
	if err := writeU64(w, exportNext); err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), nar)
	if err != nil {
		return fmt.Errorf("copying NAR: %w", err)
	}
	if it.NarSize > 0 && n != it.NarSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrNarHashMismatch, n, it.NarSize)
	}
	if it.NarHash != nil && !slices.Equal(h.Sum(nil), it.NarHash) {
		// Returning here breaks the stream mid-item: nix-store fails on it and the path
		// is never registered.
		return fmt.Errorf("%w: got %s, want %s", ErrNarHashMismatch, SHA256Text(h.Sum(nil)), SHA256Text(it.NarHash))
	}
	return WriteExportTrailer(w, it.Path, it.References, it.Deriver)
}

// WriteExportTrailer writes what follows a NAR in the export format: the magic, the path,
// its references, its deriver and an empty signature marker.
func WriteExportTrailer(w io.Writer, storePath string, references []string, deriver string) error {
	if err := writeU64(w, exportMagic); err != nil {
		return err
	}
	if err := writeNixString(w, storePath); err != nil {
		return err
	}
	if err := writeU64(w, uint64(len(references))); err != nil {
		return err
	}
	for _, r := range references {
		if err := writeNixString(w, FullStorePath(r)); err != nil {
			return err
		}
	}
	if err := writeNixString(w, deriver); err != nil {
		return err
	}
	return writeU64(w, 0) // no signature follows
}

func writeU64(w io.Writer, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, err := w.Write(b[:])
	return err
}

// writeNixString writes a Nix wire string: u64 length, bytes, zero padding to 8.
func writeNixString(w io.Writer, s string) error {
	if err := writeU64(w, uint64(len(s))); err != nil {
		return err
	}
	pad := (8 - len(s)%8) % 8
	_, err := io.WriteString(w, s+strings.Repeat("\x00", pad))
	return err
}
