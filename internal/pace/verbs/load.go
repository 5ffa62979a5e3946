package verbs

import (
	"encoding/binary"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Load record positions (pace-wire §1.14). Positions 8 and 9 are pace's own
// additions, appended where variable arity lets an older reader skip them.
const (
	loadCPU = iota
	loadAvailableMemory
	loadFreeScratch
	loadCache
	loadHistory
	loadCordoned
	loadConditions
	loadInterfaces
	loadBudgetFull
	loadAnnounceSeq
	loadPositions
)

// Load is the nested load record: what a machine is doing.
type Load struct {
	CPUBusyPermille Opt[uint32] // 0..1000, host-wide
	AvailableMemory Opt[uint64]
	FreeScratch     Opt[uint64]
	Cache           CacheLoad
	History         []HistoryBucket // closed buckets, oldest first
	Cordoned        bool
	// Conditions is the node's conditions record (NODE-ANNOUNCE only), kept as
	// the raw nested bytes: its layout is pace-private (pace-wire §5.13).
	Conditions     []byte
	InterfaceAddrs []string
	// CompileBudgetFull: the worker's in-flight byte budget is what limits
	// it (`limited-by: compile-budget`), so the scheduler answers
	// no-capacity rather than granting (pace's position 8).
	CompileBudgetFull bool
	// AnnounceSeq numbers the endpoint a NODE-ANNOUNCE states (pace's position
	// 9, NODE-ANNOUNCE only): a node numbers each address it finds itself at,
	// so the leader records a move only from a statement newer than the one on
	// record (pace-consensus §7.4).
	AnnounceSeq Opt[uint64]
}

// CacheLoad is `[tiers: per tier empty | nested [items][bytes][evictions]
// [indexBytes]][u64 hits or empty][u64 misses or empty]`.
type CacheLoad struct {
	Tiers  []TierLoad
	Hits   Opt[uint64]
	Misses Opt[uint64]
}

// TierLoad is one tier's holdings; Present false means no such tier.
type TierLoad struct {
	Present    bool
	Items      Opt[uint64]
	Bytes      Opt[uint64]
	Evictions  Opt[uint64]
	IndexBytes Opt[uint64]
}

// HistoryBucket is one closed minute of a node's own samples:
// `[u64 startMs][u64 sampleMs][packed u64 series]`.
type HistoryBucket struct {
	StartMs  uint64
	SampleMs uint64
	Values   [HistorySeries]uint64
	// Absent counts the trailing series the sender did not pack (an older
	// node packs MinHistorySeries): their Values are 0 and mean unmeasured.
	// Zero for every bucket this build closes.
	Absent uint8
}

// AppendField appends the record as one nested field.
func (l Load) AppendField(dst []byte) []byte {
	dst, mark := wire.BeginField(dst)
	dst = wire.AppendOptU32Field(dst, l.CPUBusyPermille.Value, l.CPUBusyPermille.Present)
	dst = wire.AppendOptU64Field(dst, l.AvailableMemory.Value, l.AvailableMemory.Present)
	dst = wire.AppendOptU64Field(dst, l.FreeScratch.Value, l.FreeScratch.Present)
	dst = l.Cache.appendField(dst)
	dst = appendHistory(dst, l.History)
	dst = appendFlag(dst, l.Cordoned)
	dst = wire.AppendField(dst, l.Conditions)
	dst = appendTextList(dst, l.InterfaceAddrs)
	dst = appendFlag(dst, l.CompileBudgetFull)
	dst = wire.AppendOptU64Field(dst, l.AnnounceSeq.Value, l.AnnounceSeq.Present)
	return wire.EndField(dst, mark)
}

func appendFlag(dst []byte, set bool) []byte {
	if !set {
		return wire.AppendEmptyField(dst)
	}
	return wire.AppendU8Field(dst, 1)
}

func (c CacheLoad) appendField(dst []byte) []byte {
	dst, mark := wire.BeginField(dst)
	dst, list := wire.BeginField(dst)
	for _, t := range c.Tiers {
		if !t.Present {
			dst = wire.AppendEmptyField(dst)
			continue
		}
		var rec int
		dst, rec = wire.BeginField(dst)
		for _, v := range [...]Opt[uint64]{t.Items, t.Bytes, t.Evictions, t.IndexBytes} {
			dst = wire.AppendOptU64Field(dst, v.Value, v.Present)
		}
		dst = wire.EndField(dst, rec)
	}
	dst = wire.EndField(dst, list)
	dst = wire.AppendOptU64Field(dst, c.Hits.Value, c.Hits.Present)
	dst = wire.AppendOptU64Field(dst, c.Misses.Value, c.Misses.Present)
	return wire.EndField(dst, mark)
}

func appendHistory(dst []byte, buckets []HistoryBucket) []byte {
	dst, mark := wire.BeginField(dst)
	for _, b := range buckets {
		var rec int
		dst, rec = wire.BeginField(dst)
		dst = wire.AppendU64Field(dst, b.StartMs)
		dst = wire.AppendU64Field(dst, b.SampleMs)
		dst = wire.AppendField(dst, packSeries(b.Values, b.Absent))
		dst = wire.EndField(dst, rec)
	}
	return wire.EndField(dst, mark)
}

// packSeries packs every series but the absent ones, never fewer than
// MinHistorySeries.
func packSeries(v [HistorySeries]uint64, absent uint8) []byte {
	n := max(HistorySeries-int(absent), MinHistorySeries)
	var packed [HistorySeries * 8]byte
	for i, x := range v[:n] {
		binary.BigEndian.PutUint64(packed[i*8:], x)
	}
	return packed[:n*8]
}

// load reads the nested load record at field.
func (p *parser) load(f []byte, field string) Load {
	r := p.record(f, field, loadPositions)
	pos := func(i int) []byte { b, _ := r.Field(i); return b }
	l := Load{
		CPUBusyPermille:   p.permille(pos(loadCPU), field+".cpuBusyPermille"),
		AvailableMemory:   p.opt64(pos(loadAvailableMemory), field+".availableMemory"),
		FreeScratch:       p.opt64(pos(loadFreeScratch), field+".freeScratch"),
		Cache:             p.cacheLoad(pos(loadCache), field+".cacheLoad"),
		History:           p.history(pos(loadHistory), field+".history"),
		Cordoned:          p.flag(pos(loadCordoned), field+".cordoned"),
		InterfaceAddrs:    p.texts(pos(loadInterfaces), field+".interfaceAddresses", MaxInterfaceAddrs, MaxInterfaceAddr),
		CompileBudgetFull: p.flag(pos(loadBudgetFull), field+".compileBudgetFull"),
		AnnounceSeq:       p.opt64(pos(loadAnnounceSeq), field+".announceSeq"),
	}
	if c := pos(loadConditions); len(c) > 0 && !p.failed() {
		l.Conditions = append([]byte(nil), c...)
	}
	if p.failed() {
		return Load{}
	}
	return l
}

func (p *parser) permille(f []byte, field string) Opt[uint32] {
	o := p.opt32(f, field)
	if !p.failed() && o.Value > 1000 {
		p.malformed(field, "%d is above 1000", o.Value)
	}
	return o
}

// flag reads a one-byte `01` or empty field.
func (p *parser) flag(f []byte, field string) bool {
	o := p.opt8(f, field)
	if !p.failed() && o.Present && o.Value != 1 {
		p.malformed(field, "flag byte %#02x is not 01", o.Value)
	}
	return o.Present
}

func (p *parser) cacheLoad(f []byte, field string) CacheLoad {
	r := p.record(f, field, 3)
	hits, _ := r.Field(1)
	misses, _ := r.Field(2)
	c := CacheLoad{
		Tiers:  p.tierLoads(f, field),
		Hits:   p.opt64(hits, field+".hits"),
		Misses: p.opt64(misses, field+".misses"),
	}
	return c
}

func (p *parser) tierLoads(f []byte, field string) []TierLoad {
	tiers := p.tierEntries(f, field)
	if len(tiers) == 0 {
		return nil
	}
	out := make([]TierLoad, len(tiers))
	for i, t := range tiers {
		if len(t) == 0 {
			continue
		}
		r := p.record(t, field+".tier", 4)
		pos := func(i int) []byte { b, _ := r.Field(i); return b }
		out[i] = TierLoad{Present: true,
			Items: p.opt64(pos(0), field+".items"), Bytes: p.opt64(pos(1), field+".bytes"),
			Evictions: p.opt64(pos(2), field+".evictions"), IndexBytes: p.opt64(pos(3), field+".indexBytes")}
	}
	if p.failed() {
		return nil
	}
	return out
}

// history reads ≤ MaxHistoryBuckets buckets; each must say its start, its
// sample time and at least MinHistorySeries packed values.
func (p *parser) history(f []byte, field string) []HistoryBucket {
	entries := p.list(f, field, MaxHistoryBuckets)
	if len(entries) == 0 {
		return nil
	}
	out := make([]HistoryBucket, len(entries))
	for i, e := range entries {
		r := p.record(e, field, 3)
		out[i].StartMs = p.required64(r, 0, field+".startMs")
		out[i].SampleMs = p.required64(r, 1, field+".sampleMs")
		packed, _ := r.Field(2)
		out[i].Absent = p.series(packed, field+".packed", &out[i].Values)
	}
	if p.failed() {
		return nil
	}
	return out
}

// series reads the packed values into dst and returns how many of dst's
// series the packing left out (an older sender's shorter packing).
func (p *parser) series(f []byte, field string, dst *[HistorySeries]uint64) (absent uint8) {
	if p.failed() {
		return 0
	}
	if len(f)%8 != 0 || len(f) < MinHistorySeries*8 || len(f) > MaxHistorySeries*8 {
		p.malformed(field, "%d bytes is not %d..%d packed u64 values", len(f), MinHistorySeries, MaxHistorySeries)
		return 0
	}
	n := min(len(f)/8, HistorySeries)
	for i := range n {
		dst[i] = binary.BigEndian.Uint64(f[i*8:])
	}
	return uint8(HistorySeries - n)
}
