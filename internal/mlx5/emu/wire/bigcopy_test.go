package wire

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/internal/hostcopy"
	"github.com/stretchr/testify/require"
)

// pattern fills b with bytes that depend on seed and the position, so that
// a part copied to the wrong place, twice or not at all shows.
func pattern(b []byte, seed uint32) {
	x := seed*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
}

// Payloads above hostcopy.Threshold, which AppendEncode copies on several
// goroutines, arrive byte for byte, in order, through a shared-memory ring
// and over TCP: every length around the split's thresholds up to the
// largest default frame, at odd offsets in the ring (frames of odd lengths
// in between).
func TestLargePayloads(t *testing.T) {
	noLeak(t)
	defer hostcopy.SetThreads(hostcopy.DefaultThreads)() // split on small hosts too
	sizes := []int{hostcopy.Threshold, hostcopy.Threshold + 1, 2*(hostcopy.MinChunk+64) + 5, 3*(hostcopy.MinChunk+64) - 1,
		512<<10 + 3, 1<<20 - 1, 1 << 20}
	for _, path := range []struct {
		name string
		cfg  Config
	}{{"shm", Config{ForceShm: true}}, {"tcp", Config{ForceTCP: true}}} {
		t.Run(path.name, func(t *testing.T) {
			type result struct {
				psn uint32
				err string
			}
			res := make(chan result, 2*len(sizes))
			cfg := path.cfg
			cfg.Handler = func(f *Frame) {
				want := make([]byte, len(f.Payload))
				pattern(want, f.PSN)
				r := result{psn: f.PSN}
				if !bytes.Equal(f.Payload, want) {
					r.err = fmt.Sprintf("psn %d: %d payload bytes differ from what was sent", f.PSN, len(f.Payload))
				}
				res <- r
			}
			b := listen(t, cfg)
			a := listen(t, path.cfg)
			var psn uint32
			send := func(n int) {
				f := Frame{Opcode: OpWriteOnly, SrcGID: a.GID(), DstGID: b.GID(), PSN: psn, Payload: make([]byte, n)}
				pattern(f.Payload, psn)
				psn++
				deadline := time.Now().Add(10 * time.Second)
				for {
					err := a.Send(&f)
					if err == nil {
						return
					}
					require.ErrorIs(t, err, ErrCongested)
					require.True(t, time.Now().Before(deadline), "frame of %d bytes congested for 10 s", n)
					time.Sleep(100 * time.Microsecond)
				}
			}
			for _, n := range sizes {
				send(n)
				send(n%4096 + 7) // an odd record between two large ones
			}
			for want := uint32(0); want < psn; want++ {
				select {
				case r := <-res:
					require.Equal(t, want, r.psn, "frames out of order")
					require.Empty(t, r.err)
				case <-time.After(10 * time.Second):
					t.Fatalf("frame %d of %d not delivered within 10 s", want, psn)
				}
			}
		})
	}
}

// A malformed GDAKI_EMU_COPY_THREADS stops Listen with an error naming the
// variable and its value (the setting is read once per process: the test
// runs a child process, the echo peer, with it).
func TestListenBadCopyThreads(t *testing.T) {
	for _, v := range []string{"0", "fast", "65"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envPeerRole+"=echo", hostcopy.EnvThreads+"="+v)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the peer listened with %s=%s: %s", hostcopy.EnvThreads, v, out)
		s := string(out)
		if !strings.Contains(s, "wire: listen") || !strings.Contains(s, hostcopy.EnvThreads+"=\""+v+"\"") {
			t.Fatalf("%s=%s: the error does not name the operation, the variable and its value:\n%s", hostcopy.EnvThreads, v, s)
		}
	}
}

// BenchmarkShm1MiB: Sends of 1 MiB WRITEs through a shared-memory link
// between two ports of this process (ForceShm), the receiver counting them;
// the time includes the receiver draining every frame. The sender copies
// each payload into the ring (AppendEncode, on several goroutines above
// hostcopy.Threshold); the receiver reads it in place. copy1MiB, in the
// same run, is one plain copy() of 1 MiB between two mapped buffers: what
// that copy costs on one goroutine. GDAKI_EMU_COPY_THREADS=1 gives the
// single-goroutine figure of send, =4 the split on a host of fewer than
// four processors (where it is off by default).
func BenchmarkShm1MiB(b *testing.B) {
	const n = 1 << 20
	b.Run("copy1MiB", func(b *testing.B) {
		src, dst := mapped(b, n), mapped(b, n)
		pattern(src, 1)
		copy(dst, src)
		b.SetBytes(n)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			copy(dst, src)
		}
	})
	b.Run("send", func(b *testing.B) {
		var got atomic.Int64
		a, d := shmPorts(b, &got)
		f := Frame{Opcode: OpWriteOnly, SrcGID: a.GID(), DstGID: d.GID(), Payload: mapped(b, n)}
		pattern(f.Payload, 2)
		pause := func() { runtime.Gosched() } // the ring is full: let the reader drain it
		sendQueued(b, a, &f, pause)           // dial and set the link up outside the timing
		awaitDelivered(b, &got, 1, 10*time.Second)
		if a.Stats().SharedMemory != 1 {
			b.Fatalf("no shared-memory link: %+v", a.Stats())
		}
		b.SetBytes(n)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sendQueued(b, a, &f, pause)
		}
		awaitDelivered(b, &got, int64(b.N)+1, 30*time.Second)
	})
}

// mapped maps n bytes outside the Go heap, as the emulator's buffers are.
func mapped(tb testing.TB, n int) []byte {
	tb.Helper()
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		tb.Fatalf("mmap %d: %v", n, err)
	}
	tb.Cleanup(func() { syscall.Munmap(m) })
	return m
}
