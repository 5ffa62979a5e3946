package verbs

import (
	"reflect"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Generators of valid bodies: every value they draw is within its bounds,
// so Parse(Append(v)) must give v back.

// diffOpts compares bodies: nil and empty collections are the same on the
// wire, and CodecList's fields are unexported.
var diffOpts = cmp.Options{
	cmpopts.EquateEmpty(),
	cmp.Exporter(func(reflect.Type) bool { return true }),
}

func genText(minLen, maxLen int) *rapid.Generator[string] {
	return rapid.StringN(minLen, -1, maxLen)
}

func genOpt8(t *rapid.T, label string) Opt[uint8] {
	if !rapid.Bool().Draw(t, label+"?") {
		return Opt[uint8]{}
	}
	return Some(rapid.Uint8().Draw(t, label))
}

func genOpt32(t *rapid.T, label string, max uint32) Opt[uint32] {
	if !rapid.Bool().Draw(t, label+"?") {
		return Opt[uint32]{}
	}
	return Some(rapid.Uint32Range(0, max).Draw(t, label))
}

func genOpt64(t *rapid.T, label string) Opt[uint64] {
	if !rapid.Bool().Draw(t, label+"?") {
		return Opt[uint64]{}
	}
	return Some(rapid.Uint64().Draw(t, label))
}

func genCodecs(t *rapid.T, label string) wire.CodecList {
	ids := rapid.SliceOfN(rapid.Byte(), 0, wire.MaxCodecList).Draw(t, label)
	codecs := make([]wire.Codec, len(ids))
	for i, id := range ids {
		codecs[i] = wire.Codec(id)
	}
	return wire.NewCodecList(codecs...)
}

func genTexts(t *rapid.T, label string, maxEntries, maxLen int) []string {
	return rapid.SliceOfN(genText(1, maxLen), 0, maxEntries).Draw(t, label)
}

func genEndpoint() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		host := rapid.SampledFrom([]string{"10.0.0.7", "build-3.example", "[fe80::1]", "192.168.1.20"}).Draw(t, "host")
		port := rapid.IntRange(1, 65535).Draw(t, "port")
		return host + ":" + strconv.Itoa(port)
	})
}

func genCapacity(t *rapid.T) Capacity {
	return Capacity{
		LogicalCores:   genOpt32(t, "cores", 1<<20),
		TotalMemory:    genOpt64(t, "memory"),
		NodeClass:      genOpt8(t, "class"),
		ReservedCores:  genOpt32(t, "reserved", 64),
		CacheTiers:     rapid.SliceOfN(rapid.Custom(genTierLimit), 0, MaxCacheTiers).Draw(t, "tiers"),
		Version:        genText(0, MaxVersion).Draw(t, "version"),
		ReservedMemory: genOpt64(t, "reservedMemory"),
		ToolchainLabel: genText(0, MaxLabel).Draw(t, "label"),
		DisplayName:    genText(0, MaxDisplayName).Draw(t, "display"),
		InterfaceAddrs: genTexts(t, "addrs", MaxInterfaceAddrs, MaxInterfaceAddr),
	}
}

func genTierLimit(t *rapid.T) TierLimit {
	if !rapid.Bool().Draw(t, "present") {
		return TierLimit{}
	}
	return TierLimit{Present: true, BytesLimit: rapid.Uint64().Draw(t, "limit")}
}

func genTierLoad(t *rapid.T) TierLoad {
	if !rapid.Bool().Draw(t, "present") {
		return TierLoad{}
	}
	return TierLoad{Present: true, Items: genOpt64(t, "items"), Bytes: genOpt64(t, "bytes"),
		Evictions: genOpt64(t, "evictions"), IndexBytes: genOpt64(t, "index")}
}

func genBucket(t *rapid.T) HistoryBucket {
	b := HistoryBucket{StartMs: rapid.Uint64().Draw(t, "start"), SampleMs: rapid.Uint64().Draw(t, "sample")}
	// An older sender packs fewer series; what it leaves out reads back as 0.
	b.Absent = uint8(rapid.IntRange(0, HistorySeries-MinHistorySeries).Draw(t, "absent"))
	for i := range HistorySeries - int(b.Absent) {
		b.Values[i] = rapid.Uint64().Draw(t, "v")
	}
	return b
}

func genLoad(t *rapid.T) Load {
	return Load{
		CPUBusyPermille: genOpt32(t, "cpu", 1000),
		AvailableMemory: genOpt64(t, "avail"),
		FreeScratch:     genOpt64(t, "scratch"),
		Cache: CacheLoad{
			Tiers:  rapid.SliceOfN(rapid.Custom(genTierLoad), 0, MaxCacheTiers).Draw(t, "tierLoads"),
			Hits:   genOpt64(t, "hits"),
			Misses: genOpt64(t, "misses"),
		},
		History:           rapid.SliceOfN(rapid.Custom(genBucket), 0, 4).Draw(t, "history"),
		Cordoned:          rapid.Bool().Draw(t, "cordoned"),
		Conditions:        rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "conditions"),
		InterfaceAddrs:    genTexts(t, "loadAddrs", MaxInterfaceAddrs, MaxInterfaceAddr),
		CompileBudgetFull: rapid.Bool().Draw(t, "budgetFull"),
		AnnounceSeq:       genOpt64(t, "announceSeq"),
	}
}

func genLease(t *rapid.T) LeaseRequest {
	return LeaseRequest{
		Fingerprint:    genText(1, MaxFingerprint).Draw(t, "fingerprint"),
		Key:            genText(1, MaxKey).Draw(t, "key"),
		Codecs:         genCodecs(t, "codecs"),
		Exclusions:     genTexts(t, "exclusions", MaxExclusions, MaxExclusionLen),
		ToolchainLabel: genText(0, MaxLabel).Draw(t, "label"),
	}
}

func genKey(t *rapid.T, label string) []byte {
	if !rapid.Bool().Draw(t, label+"?") {
		return nil
	}
	return rapid.SliceOfN(rapid.Byte(), KeyLen, KeyLen).Draw(t, label)
}

// genRaw draws path-like bytes: anything but NUL.
func genRaw(minLen, maxLen int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		b := rapid.SliceOfN(rapid.ByteRange(1, 255), minLen, maxLen).Draw(t, "raw")
		return string(b)
	})
}

func genCompile(t *rapid.T) CompileRequest {
	r := CompileRequest{
		LeaseToken:  genText(1, MaxLeaseToken).Draw(t, "token"),
		Fingerprint: genText(1, MaxFingerprint).Draw(t, "fingerprint"),
		Args:        rapid.SliceOfN(genRaw(0, 40), 0, 20).Draw(t, "args"),
		Source:      rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "source"),
		Codecs:      genCodecs(t, "codecs"),
		SourceName:  genRaw(0, 100).Draw(t, "sourceName"),
	}
	if rapid.Bool().Draw(t, "compileDir?") {
		r.CompileDir, r.CompileDirReplacement = genRaw(1, 80).Draw(t, "dir"), genRaw(1, 80).Draw(t, "dirRepl")
	}
	if rapid.Bool().Draw(t, "sourceRoot?") {
		r.SourceRoot, r.SourceRootReplacement = genRaw(1, 80).Draw(t, "root"), genRaw(1, 80).Draw(t, "rootRepl")
	}
	return r
}
