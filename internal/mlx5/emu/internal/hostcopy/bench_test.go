package hostcopy

import (
	"fmt"
	"testing"
)

// BenchmarkCopy: Copy against copy() (the reference, measured in the same
// run) at 64 KiB, 1 MiB and 4 MiB, between mapped buffers as the emulator's
// payloads are, with 2, 4 and 8 workers and the default (Workers()):
//
//	go test -run xxx -bench Copy ./internal/mlx5/emu/internal/hostcopy/
//
// src and dst sit 4 KiB + 64 bytes apart in their pages' alignment, as two
// independent buffers usually do (equal page offsets make loads and stores
// alias in the core's store buffer and slow every copy, split or not).
func BenchmarkCopy(b *testing.B) {
	for _, n := range []int{64 << 10, 1 << 20, 4 << 20} {
		src := hostMem(b, n+8192)[4096+64:][:n]
		dst := hostMem(b, n)
		random(src, 1)
		name := func(s string) string { return fmt.Sprintf("%dKiB/%s", n>>10, s) }
		run := func(f func()) func(*testing.B) {
			return func(b *testing.B) {
				f()
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					f()
				}
			}
		}
		b.Run(name("builtin"), run(func() { copy(dst, src) }))
		// One goroutine in parts of 256 KiB with ordinary stores (copy()
		// stores non-temporally from 1 MiB on, Copy's parts too): what
		// the caches give when the destination stays in them.
		b.Run(name("builtin256KiBparts"), run(func() {
			for o := 0; o < n; o += 256 << 10 {
				e := min(o+256<<10, n)
				copy(dst[o:e], src[o:e])
			}
		}))
		b.Run(name(fmt.Sprintf("default%d", Workers())), run(func() { Copy(dst, src) }))
		for _, w := range []int{2, 4, 8} {
			b.Run(name(fmt.Sprintf("workers%d", w)), run(func() { CopyN(dst, src, w) }))
		}
	}
}

// BenchmarkCopyColdDst: 1 MiB copies into a destination that moves through
// 256 MiB, far more than the last-level cache (as put_bw and write_bw at
// 1 MiB write 512 threads' slices of a 512 MiB buffer), against copy() in
// the same run. Here copy()'s non-temporal stores (1 MiB and up) beat
// ordinary ones (builtin256KiBparts in BenchmarkCopy), which is why
// Copy's parts of such a copy store non-temporally too.
func BenchmarkCopyColdDst(b *testing.B) {
	const n, span = 1 << 20, 256 << 20
	src := hostMem(b, n+8192)[4096+64:][:n]
	random(src, 1)
	big := hostMem(b, span)
	for i := range big {
		big[i] = byte(i) // fault every page in outside the timing
	}
	run := func(f func(dst []byte)) func(*testing.B) {
		return func(b *testing.B) {
			b.SetBytes(n)
			for i := 0; i < b.N; i++ {
				f(big[(i%(span/n))*n:][:n])
			}
		}
	}
	b.Run("builtin", run(func(dst []byte) { copy(dst, src) }))
	b.Run(fmt.Sprintf("default%d", Workers()), run(func(dst []byte) { Copy(dst, src) }))
	for _, w := range []int{2, 4} {
		b.Run(fmt.Sprintf("workers%d", w), run(func(dst []byte) { CopyN(dst, src, w) }))
	}
}
