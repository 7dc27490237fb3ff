package wire

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
