package tier

import (
	"fmt"
	"strconv"
)

// Codec names in the startup line: the store writes every record uncompressed today, and each
// record carries its codec, so a compressing codec can arrive without a migration.
const (
	memoryCodec = "none"
	diskCodec   = "none"
)

// String is the startup line of pace-node §4, naming the effective halves, codecs and
// upstream:
//
//	local cache tier (memory 8G none, disk 36G none at /var/cache/pace, upstream kv:6674)
//
// A half that is not configured reads "off"; an unbounded disk reads "unbounded". The
// password is never part of it.
func (t *Tier) String() string {
	return describe(t.cfg)
}

func describe(c Config) string {
	memory := "memory off"
	if c.MaxMemory > 0 {
		memory = "memory " + formatSize(c.MaxMemory) + " " + memoryCodec
	}
	disk := "disk off"
	if c.Dir != "" {
		size := "unbounded"
		if c.MaxDisk > 0 {
			size = formatSize(c.MaxDisk)
		}
		disk = fmt.Sprintf("disk %s %s at %s", size, diskCodec, c.Dir)
	}
	up := "none"
	if c.Upstream != "" {
		up = c.Upstream
	}
	return fmt.Sprintf("local cache tier (%s, %s, upstream %s)", memory, disk, up)
}

// formatSize writes n bytes in the largest binary unit that divides it exactly ("8G",
// "1536M", "4097"), so the line states the budget without rounding it.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
