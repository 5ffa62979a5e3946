package verbs

import "github.com/buildfleet/buildfleet/internal/pace/wire"

// NodeClass is the capacity record's node class (position 2, pace-wire §1.14):
// 1 workstation, 2 dedicated.
type NodeClass uint8

// Node classes: a workstation keeps cores back for its user by default,
// a dedicated builder keeps none (pace-node §5.1).
const (
	ClassWorkstation NodeClass = 1
	ClassDedicated   NodeClass = 2
)

// Capacity record positions (pace-wire §1.14).
const (
	capCores = iota
	capTotalMemory
	capNodeClass
	capReservedCores
	capCache
	capVersion
	capReservedMemory
	capLabel
	capDisplayName
	capInterfaces
	capacityPositions
)

// Capacity is the nested capacity record: what a machine is. Every
// position is optional; an unsaid position reads as absent.
type Capacity struct {
	LogicalCores   Opt[uint32]
	TotalMemory    Opt[uint64]
	NodeClass      Opt[uint8]
	ReservedCores  Opt[uint32] // absent = the class default
	CacheTiers     []TierLimit // per storage tier, in tier order
	Version        string
	ReservedMemory Opt[uint64]
	ToolchainLabel string
	DisplayName    string // a label only, never an identity
	InterfaceAddrs []string
}

// TierLimit is one tier's byte budget: Present false means no such tier
// on this machine; a zero limit is unbounded.
type TierLimit struct {
	Present    bool
	BytesLimit uint64
}

// AppendField appends the record as one nested field.
func (c Capacity) AppendField(dst []byte) []byte {
	dst, mark := wire.BeginField(dst)
	dst = wire.AppendOptU32Field(dst, c.LogicalCores.Value, c.LogicalCores.Present)
	dst = wire.AppendOptU64Field(dst, c.TotalMemory.Value, c.TotalMemory.Present)
	dst = appendOptU8(dst, c.NodeClass)
	dst = wire.AppendOptU32Field(dst, c.ReservedCores.Value, c.ReservedCores.Present)
	dst = appendCacheCapacity(dst, c.CacheTiers)
	dst = wire.AppendStringField(dst, c.Version)
	dst = wire.AppendOptU64Field(dst, c.ReservedMemory.Value, c.ReservedMemory.Present)
	dst = wire.AppendStringField(dst, c.ToolchainLabel)
	dst = wire.AppendStringField(dst, c.DisplayName)
	dst = appendTextList(dst, c.InterfaceAddrs)
	return wire.EndField(dst, mark)
}

// cacheCapacity is `[tiers nested: per tier empty | nested [u64 bytesLimit]]`.
func appendCacheCapacity(dst []byte, tiers []TierLimit) []byte {
	dst, outer := wire.BeginField(dst)
	dst, list := wire.BeginField(dst)
	for _, t := range tiers {
		if !t.Present {
			dst = wire.AppendEmptyField(dst)
			continue
		}
		var rec int
		dst, rec = wire.BeginField(dst)
		dst = wire.EndField(wire.AppendU64Field(dst, t.BytesLimit), rec)
	}
	dst = wire.EndField(dst, list)
	return wire.EndField(dst, outer)
}

func appendOptU8(dst []byte, o Opt[uint8]) []byte {
	if !o.Present {
		return wire.AppendEmptyField(dst)
	}
	return wire.AppendU8Field(dst, o.Value)
}

// capacity reads the nested capacity record at field.
func (p *parser) capacity(f []byte, field string) Capacity {
	r := p.record(f, field, capacityPositions)
	pos := func(i int) []byte { b, _ := r.Field(i); return b }
	c := Capacity{
		LogicalCores:   p.opt32(pos(capCores), field+".logicalCores"),
		TotalMemory:    p.opt64(pos(capTotalMemory), field+".totalMemory"),
		NodeClass:      p.opt8(pos(capNodeClass), field+".nodeClass"),
		ReservedCores:  p.opt32(pos(capReservedCores), field+".reservedCores"),
		CacheTiers:     p.tierLimits(pos(capCache), field+".cacheCapacity"),
		Version:        p.text(pos(capVersion), field+".version", MaxVersion),
		ReservedMemory: p.opt64(pos(capReservedMemory), field+".reservedMemory"),
		ToolchainLabel: p.text(pos(capLabel), field+".toolchainLabel", MaxLabel),
		DisplayName:    p.text(pos(capDisplayName), field+".displayName", MaxDisplayName),
		InterfaceAddrs: p.texts(pos(capInterfaces), field+".interfaceAddresses", MaxInterfaceAddrs, MaxInterfaceAddr),
	}
	if p.failed() {
		return Capacity{}
	}
	return c
}

// tierLimits reads `[tiers nested]`, each tier empty or `[u64 bytesLimit]`.
func (p *parser) tierLimits(f []byte, field string) []TierLimit {
	tiers := p.tierEntries(f, field)
	if len(tiers) == 0 {
		return nil
	}
	out := make([]TierLimit, len(tiers))
	for i, t := range tiers {
		if len(t) == 0 {
			continue
		}
		limit := p.record(t, field, 1)
		out[i] = TierLimit{Present: true, BytesLimit: p.required64(limit, 0, field+".bytesLimit")}
	}
	if p.failed() {
		return nil
	}
	return out
}

// tierEntries reads a cache record's first position, the per-tier list.
func (p *parser) tierEntries(f []byte, field string) [][]byte {
	r := p.record(f, field, 1)
	list, _ := r.Field(0)
	return p.list(list, field+".tiers", MaxCacheTiers)
}

// required64 reads a record position that must be a present u64.
func (p *parser) required64(r wire.Record, i int, field string) uint64 {
	f, _ := r.Field(i)
	o := p.opt64(f, field)
	if !p.failed() && !o.Present {
		p.malformed(field, "missing")
	}
	return o.Value
}
