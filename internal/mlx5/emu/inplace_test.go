package emu

import (
	"bytes"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// TestInPlaceWrite: between two NICs linked by a shared-memory ring, a
// WRITE of at least inPlaceMin bytes from (fake) device memory is read
// straight into the ring (wire.Port.SendInPlace; inPlaceFrames counts the
// frames) and lands byte for byte, in one frame or several; messages
// posted behind a small one are not read ahead. Before the link is up the
// frames go the usual way.
func TestInPlaceWrite(t *testing.T) {
	g := useGPU(t, newFakeGPU())
	a := newNIC(t, Config{Name: "emuPa", Wire: wire.Config{ForceShm: true}})
	b := newNIC(t, Config{Name: "emuPb", Wire: wire.Config{ForceShm: true}})
	const dataLen = 8 << 20
	// No ACK timer: a retransmission on a loaded machine would send a
	// frame in place once more. The count is this QP's own.
	x, y := pair(t, a, b, qpOpts{gpu: g, mtu: mlx5.MTU4096, dataLen: dataLen, noAckTO: true}, qpOpts{mtu: mlx5.MTU4096, dataLen: dataLen, noAckTO: true})
	xq := x.emuQP()
	write := func(t *testing.T, src, dst, n int, seed byte) {
		t.Helper()
		fill(x.data[src:src+n], seed)
		idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(dst), x.sge(src, uint32(n))))
		expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
		if !bytes.Equal(y.data[dst:dst+n], x.data[src:src+n]) {
			t.Fatalf("%d bytes from %d to %d: the landing differs", n, src, dst)
		}
	}
	// The link comes up in the background after the first frame dials.
	for i := 0; !a.port.CanSendInPlace(wire.GID(b.GID())); i++ {
		if i == 1000 {
			t.Fatal("no shared-memory link after 1000 WRITEs")
		}
		write(t, 0, 0, 64, byte(i))
	}
	for _, tc := range []struct {
		name        string
		src, dst, n int
		frames      uint64
		small       bool // a small WRITE posted first, with the same doorbell
		seed        byte
	}{
		{"256KiB", 0, 0, inPlaceMin, 1, false, 3},
		{"1MiB odd", 4097, 1<<20 + 5, 1 << 20, 1, false, 5},
		{"3MiB+5", 13, 2<<20 + 1, 3<<20 + 5, 3, false, 7}, // the last frame, 5 bytes, the usual way
		{"behind a small one", 8, 64, 1 << 20, 1, true, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := xq.inPlaceFrames.Load()
			if tc.small {
				fill(x.data[6<<20:6<<20+100], 1)
				fill(x.data[tc.src:tc.src+tc.n], tc.seed)
				s := x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(7<<20), x.sge(6<<20, 100)))
				l := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(tc.dst), x.sge(tc.src, uint32(tc.n))))
				expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, s)
				expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, l)
				if !bytes.Equal(y.data[7<<20:7<<20+100], x.data[6<<20:6<<20+100]) || !bytes.Equal(y.data[tc.dst:tc.dst+tc.n], x.data[tc.src:tc.src+tc.n]) {
					t.Fatal("the landings differ")
				}
			} else {
				write(t, tc.src, tc.dst, tc.n, tc.seed)
			}
			if got := xq.inPlaceFrames.Load() - before; got != tc.frames {
				t.Fatalf("%d frames in place, want %d", got, tc.frames)
			}
		})
	}
}

// A WRITE held back in a shared-memory link because more WQEs follow
// (wire.Frame.Hold) is published when transmit stops short of them: here a
// WAIT after it holds the rest of the queue until another QP's CQE comes,
// and the WRITE must land and complete meanwhile; once the awaited CQE
// comes, the WRITE after the WAIT goes too.
func TestHeldFrameFlushed(t *testing.T) {
	a := newNIC(t, Config{Name: "emuHa", Wire: wire.Config{ForceShm: true}})
	b := newNIC(t, Config{Name: "emuHb", Wire: wire.Config{ForceShm: true}})
	data, _ := pair(t, a, b, qpOpts{}, qpOpts{})
	x, y := pair(t, a, b, qpOpts{cdMaster: true}, qpOpts{})
	for i := 0; !a.port.CanSendInPlace(wire.GID(b.GID())); i++ {
		if i == 1000 {
			t.Fatal("no shared-memory link after 1000 WRITEs")
		}
		x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 8)))
		x.mustPoll()
	}
	x.lock()
	fill(x.data[:128], 0x77)
	x.unlock()
	w1 := x.postNoDB(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 64)))
	x.postNoDB(mlx5.NewWait(mlx5.WQEHead{}, data.cqn, 0))
	w2 := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(64), x.sge(64, 64)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, w1)
	y.lock()
	landed := bytes.Equal(y.data[:64], x.data[:64])
	y.unlock()
	if !landed {
		t.Fatal("the WRITE before the WAIT completed but did not land")
	}
	if _, ok := x.tryPoll(); ok {
		t.Fatal("a CQE after the WAIT before the awaited completion")
	}
	data.post(mlx5.NewNOP(signaled))
	data.mustPoll()
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, w2)
	y.lock()
	defer y.unlock()
	if !bytes.Equal(y.data[64:128], x.data[64:128]) {
		t.Fatal("the WRITE after the WAIT did not land")
	}
}
