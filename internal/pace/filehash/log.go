package filehash

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// maxLog is the size past which Flush rewrites the log with one record per path.
const maxLog = 8 << 20

// maxPath bounds a recorded path; longer ones are simply not remembered.
const maxPath = 4096

// A record is [u32 len][u64 dev][u64 ino][i64 size][i64 mtime][i64 ctime][i64 recorded]
// [u8 flags][32 digest][path], little-endian, len counting everything after itself.
const fixedRecord = 8*6 + 1 + 32

func appendRecord(b *bytes.Buffer, path string, e entry) {
	if len(path) > maxPath {
		return
	}
	var hdr [4 + fixedRecord]byte
	binary.LittleEndian.PutUint32(hdr[0:], uint32(fixedRecord+len(path)))
	binary.LittleEndian.PutUint64(hdr[4:], e.sig.dev)
	binary.LittleEndian.PutUint64(hdr[12:], e.sig.ino)
	binary.LittleEndian.PutUint64(hdr[20:], uint64(e.sig.size))
	binary.LittleEndian.PutUint64(hdr[28:], uint64(e.sig.mtime))
	binary.LittleEndian.PutUint64(hdr[36:], uint64(e.sig.ctime))
	binary.LittleEndian.PutUint64(hdr[44:], uint64(e.recorded))
	if e.sum.Temporal {
		hdr[52] = 1
	}
	copy(hdr[53:], e.sum.Digest[:])
	b.Write(hdr[:])
	b.WriteString(path)
}

// load reads the log; parsing stops at the first damaged record (a torn append), keeping what
// came before.
func (c *Cache) load() {
	data, err := os.ReadFile(filepath.Join(c.dir, LogName))
	if err != nil {
		return
	}
	c.logSize = int64(len(data))
	for len(data) >= 4 {
		n := int(binary.LittleEndian.Uint32(data))
		if n < fixedRecord || n > fixedRecord+maxPath || len(data) < 4+n {
			return
		}
		rec := data[4 : 4+n]
		data = data[4+n:]
		var e entry
		e.sig.dev = binary.LittleEndian.Uint64(rec[0:])
		e.sig.ino = binary.LittleEndian.Uint64(rec[8:])
		e.sig.size = int64(binary.LittleEndian.Uint64(rec[16:]))
		e.sig.mtime = int64(binary.LittleEndian.Uint64(rec[24:]))
		e.sig.ctime = int64(binary.LittleEndian.Uint64(rec[32:]))
		e.recorded = int64(binary.LittleEndian.Uint64(rec[40:]))
		e.sum.Temporal = rec[48] == 1
		copy(e.sum.Digest[:], rec[49:81])
		c.entries[string(rec[fixedRecord:])] = e
	}
}

// rewrite replaces the log with one record per path it knows, through a temporary file and a
// rename, so a concurrent reader sees the old log or the new one, never half of either.
func (c *Cache) rewrite() error {
	var b bytes.Buffer
	for path, e := range c.entries {
		if e.trusted(e.sig) {
			appendRecord(&b, path, e)
		}
	}
	tmp, err := os.CreateTemp(c.dir, ".filehash-*")
	if err != nil {
		return fmt.Errorf("filehash: %w", err)
	}
	_, werr := tmp.Write(b.Bytes())
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(c.dir, LogName))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("filehash: %w", werr)
	}
	c.pending.Reset()
	return nil
}
