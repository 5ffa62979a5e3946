package cachekey

import (
	"fmt"
	"testing"
)

func BenchmarkContent(b *testing.B) {
	for _, n := range []int{512, 16 << 10, 1 << 20} {
		buf := make([]byte, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Content(buf)
			}
		})
	}
}
