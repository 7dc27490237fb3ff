package emu

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// TestDoorbellStress: many QPs share one UAR page and ring it concurrently
// from their own goroutines (as GPU threads or CPU proxies would), in DBR
// mode at 0x800 and in DBR-less mode at 0x600, where doorbells overwrite
// each other before the emulator reads them. Every WQE must execute: each QP
// counts up a word at its peer and the final value must be exact.
func TestDoorbellStress(t *testing.T) {
	for _, mode := range []struct {
		name  string
		model Model
		noDBR bool
	}{{"dbr", ModelCX7, false}, {"no_dbr", ModelCX8, true}} {
		t.Run(mode.name, func(t *testing.T) {
			a := newNIC(t, Config{Name: "emuS", Model: mode.model})
			b := newNIC(t, Config{Name: "emuT", Model: mode.model})
			const nQP, batches, batch = 16, 40, 16
			if testing.Short() {
				t.Skip("stress test")
			}
			first := newEndpoint(t, a, qpOpts{noDBR: mode.noDBR})
			eps := []*endpoint{first}
			for i := 1; i < nQP; i++ {
				eps = append(eps, newEndpoint(t, a, qpOpts{noDBR: mode.noDBR, share: first}))
			}
			peers := make([]*endpoint, nQP)
			for i, e := range eps {
				peers[i] = newEndpoint(t, b, qpOpts{})
				e.connect(peers[i], uint32(i), uint32(i)+0x1000)
				peers[i].connect(e, uint32(i)+0x1000, uint32(i))
			}
			var wg sync.WaitGroup
			errs := make(chan error, nQP)
			for i := range eps {
				wg.Add(1)
				go func(e, p *endpoint) {
					defer wg.Done()
					for k := 0; k < batches; k++ {
						var last uint16
						for j := 0; j < batch; j++ {
							h := mlx5.WQEHead{}
							if j == batch-1 {
								h = signaled
							}
							last = e.postNoDB(mlx5.NewAtomicFA(h, p.raddr(0), 1, e.sge(64, 8)))
							e.ring(mlx5.CtrlSeg{}) // one doorbell per WQE, all on the same page
						}
						c, err := e.poll(10e9)
						if err != nil {
							errs <- fmt.Errorf("qp 0x%x batch %d: %w", e.qpn, k, err)
							return
						}
						if c.Opcode != mlx5.CQEReq || c.WQECounter != last {
							errs <- fmt.Errorf("qp 0x%x: CQE %v %v counter %d, want %d", e.qpn, c.Opcode, c.Syndrome, c.WQECounter, last)
							return
						}
					}
				}(eps[i], peers[i])
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i, p := range peers {
				if got := binary.LittleEndian.Uint64(p.data[0:]); got != batches*batch {
					t.Fatalf("qp %d: counter %d, want %d", i, got, batches*batch)
				}
			}
		})
	}
}

// TestDoorbellWrongPage: a doorbell written to a UAR page other than the
// QP's uar_page is ignored (DBR-less mode, where the doorbell is the only
// signal).
func TestDoorbellWrongPage(t *testing.T) {
	a := newNIC(t, Config{Name: "emuW", Model: ModelCX8})
	b := newNIC(t, Config{Name: "emuX", Model: ModelCX8})
	x, y := pair(t, a, b, qpOpts{noDBR: true}, qpOpts{})
	other, err := x.dev.AllocUAR(mlx5.UARTypeNCDedicated)
	must(t, err)
	defer other.Free()
	x.postNoDB(mlx5.NewRDMAWriteInline(signaled, y.raddr(0), []byte{9}))
	d := mlx5.SQDoorbellPI(x.qpn, uint32(x.pi))
	atomic.StoreUint64(ptr64(other.BaseAddr()+mlx5.UAROffsetNoDBR), d.Uint64())
	if _, err := x.poll(30e6); err == nil {
		t.Fatal("a doorbell on a foreign page executed the WQE")
	}
	x.ring(mlx5.CtrlSeg{})
	if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || y.data[0] != 9 {
		t.Fatalf("after the right doorbell: %v, data %d", c.Opcode, y.data[0])
	}
}

// TestDoorbellBeforeRTS: WQEs posted while the QP is in INIT are executed
// once it reaches RTS.
func TestDoorbellBeforeRTS(t *testing.T) {
	a, b := twoNICs(t)
	for _, noDBR := range []bool{false, true} {
		x := newEndpoint(t, a, qpOpts{})
		if noDBR {
			a2 := newNIC(t, Config{Name: "emuY", Model: ModelCX8})
			x = newEndpoint(t, a2, qpOpts{noDBR: true})
		}
		y := newEndpoint(t, b, qpOpts{})
		x.post(mlx5.NewRDMAWriteInline(signaled, y.raddr(8), []byte{5}))
		if _, err := x.poll(20e6); err == nil {
			t.Fatal("a WQE executed in RST")
		}
		x.connect(y, 1, 2)
		y.connect(x, 2, 1)
		if c := x.mustPoll(); c.Opcode != mlx5.CQEReq || y.data[8] != 5 {
			t.Fatalf("noDBR=%v: %v, data %d", noDBR, c.Opcode, y.data[8])
		}
	}
}

// TestNoDBROverwrittenDoorbell makes the race deterministic: while the
// engine is held off the page, QP 1 rings, then QP 2's doorbell overwrites
// it. QP 1's WQE must still execute (recovered by the page scan).
func TestNoDBROverwrittenDoorbell(t *testing.T) {
	a := newNIC(t, Config{Name: "emuO", Model: ModelCX8})
	b := newNIC(t, Config{Name: "emuP", Model: ModelCX8})
	x1, y1, x2, y2 := pagePairs(t, a, b, qpOpts{noDBR: true})
	x1.postNoDB(mlx5.NewRDMAWriteInline(signaled, y1.raddr(0), []byte{1}))
	x1.postNoDB(mlx5.NewRDMAWriteInline(signaled, y1.raddr(1), []byte{2}))
	x2.postNoDB(mlx5.NewRDMAWriteInline(signaled, y2.raddr(0), []byte{3}))
	a.uarPollMu.Lock()
	x1.ring(mlx5.CtrlSeg{})
	x2.ring(mlx5.CtrlSeg{}) // same slot (0x600): x1's doorbell is gone
	if v := atomic.LoadUint64(ptr64(x1.uar.BaseAddr() + mlx5.UAROffsetNoDBR)); v != mlx5.SQDoorbellPI(x2.qpn, uint32(x2.pi)).Uint64() {
		t.Fatalf("slot holds %x", v)
	}
	a.uarPollMu.Unlock()
	x2.mustPoll()
	x1.mustPoll()
	x1.mustPoll()
	if y1.data[0] != 1 || y1.data[1] != 2 || y2.data[0] != 3 {
		t.Fatalf("data %v %v", y1.data[:2], y2.data[:1])
	}
}
