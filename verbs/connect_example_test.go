package verbs_test

import (
	"fmt"
	"io"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/verbs"
)

// ExampleQP_PostSend is a whole host-only RDMA exchange on the emulated
// devices emu0 and emu1 (no NIC or GPU needed): each side opens its device,
// a PD, the device object, a CQ and an RC QP and registers a buffer; the
// sides exchange endpoints (bytes a real program sends out of band),
// connect, and emu0 RDMA-writes into emu1's buffer and waits for the
// completion.
func ExampleQP_PostSend() {
	var opened []io.Closer // closed last first
	defer func() {
		for i := len(opened) - 1; i >= 0; i-- {
			must(opened[i].Close())
		}
	}()
	type side struct {
		qp  *verbs.QP
		cq  *verbs.CQ
		mr  *verbs.MR
		buf anonMem
		ep  verbs.LocalEndpoint
	}
	open := func(name string) (s side) {
		ctx := kept(verbs.OpenDevice(name))(&opened)
		pd := kept(ctx.AllocPD())(&opened)
		dev := kept(verbs.OpenDev(pd))(&opened)
		s.cq = kept(dev.NewCQ(verbs.CQConfig{Size: 64}))(&opened)
		s.qp = kept(dev.NewQP(verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq, SQWR: 32, RQWR: 32, SendMaxSGE: 1, RecvMaxSGE: 1}))(&opened)
		s.buf = kept(newAnonMem(4096))(&opened) // memory the NIC touches is not Go heap memory
		s.mr = kept(pd.RegMR(s.buf.addr(), 4096, verbs.AccessLocalWrite|verbs.AccessRemoteWrite))(&opened)
		var err error
		s.ep, err = s.qp.LocalEndpoint(1, 0)
		must(err)
		s.ep.Regions = []verbs.Region{s.mr.Region()}
		return s
	}
	a, b := open("emu0"), open("emu1")

	// The exchange: each side sends its endpoint as bytes, the other decodes it.
	wireA, err := a.ep.MarshalBinary()
	must(err)
	wireB, err := b.ep.MarshalBinary()
	must(err)
	var peerOfA, peerOfB verbs.Endpoint
	must(peerOfA.UnmarshalBinary(wireB))
	must(peerOfB.UnmarshalBinary(wireA))
	must(a.qp.ConnectRC(a.ep, peerOfA, nil))
	must(b.qp.ConnectRC(b.ep, peerOfB, nil))

	msg := "hello, RDMA"
	copy(a.buf, msg)
	dst := peerOfA.Regions[0]
	must(a.qp.PostSend(verbs.SendWR{WRID: 7, Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: uint64(a.buf.addr()), Length: uint32(len(msg)), LKey: a.mr.LKey()}},
		RemoteAddr: dst.Addr + 100, RKey: dst.RKey}))
	wc := make([]verbs.WC, 1)
	_, err = a.cq.PollWait(wc, 1, 5*time.Second)
	must(err)
	fmt.Println(wc[0].WRID, wc[0].Status, string(b.buf[100:100+len(msg)]))
	// Output: 7 IBV_WC_SUCCESS hello, RDMA
}

// kept returns v and adds it to the list of what the example closes, or
// panics with err.
func kept[T io.Closer](v T, err error) func(*[]io.Closer) T {
	return func(list *[]io.Closer) T {
		must(err)
		*list = append(*list, v)
		return v
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// anonMem is anonymous memory from mmap.
type anonMem []byte

func newAnonMem(n int) (anonMem, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func (m anonMem) addr() uintptr { return uintptr(unsafe.Pointer(&m[0])) }
func (m anonMem) Close() error  { return syscall.Munmap(m) }
