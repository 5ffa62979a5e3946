package history

import "math"

// rings reads the rings rs in order, each into its preallocated slots.
func (d *decoder) rings(rs ...*ring) {
	for _, r := range rs {
		if !d.bool("ring") {
			continue
		}
		r.head, r.has = d.varint("newest period"), true
		if r.head < 0 || r.head > math.MaxInt64/r.width {
			d.fail("newest period %d", r.head)
		}
		rows := d.uvarint(uint64(r.size), "rows")
		next := uint64(0)
		for range rows {
			i := d.uvarint(uint64(r.size-1), "row")
			if d.err == nil && i < next {
				d.fail("row %d out of order", i)
			}
			if d.err != nil {
				return
			}
			next = i + 1
			d.row(r.at(r.head - r.size + 1 + int64(i)))
		}
	}
}

func (d *decoder) row(row []slot) {
	for c := range row {
		n := d.uvarint(math.MaxUint32, "count")
		if n == 0 {
			continue
		}
		row[c] = slot{Count: uint32(n), Low: d.uvarint(math.MaxUint64, "low"),
			High: d.uvarint(math.MaxUint64, "high"), Total: d.uvarint(math.MaxUint64, "total")}
	}
}
