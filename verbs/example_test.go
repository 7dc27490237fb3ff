package verbs_test

import (
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/verbs"
)

// side is one end of the example's connection: a device, a PD, the device
// object of DOCA GPUNetIO 3.0 (Dev), a CQ, an RC QP and a registered 4 KiB
// buffer.
type side struct {
	ctx *verbs.Context
	pd  *verbs.PD
	dev *verbs.Dev
	cq  *verbs.CQ
	qp  *verbs.QP
	buf []byte // mmap'd: memory the NIC touches is never Go heap memory
	mr  *verbs.MR
	gid verbs.GID
}

func openSide(name string) (*side, error) {
	s := &side{}
	var err error
	if s.ctx, err = verbs.OpenDevice(name); err != nil {
		return nil, err
	}
	if s.pd, err = s.ctx.AllocPD(); err != nil {
		return s, err
	}
	if s.dev, err = verbs.OpenDev(s.pd); err != nil {
		return s, err
	}
	if s.cq, err = s.dev.NewCQ(verbs.CQConfig{Size: 64}); err != nil {
		return s, err
	}
	if s.qp, err = s.dev.NewQP(verbs.QPConfig{SendCQ: s.cq, RecvCQ: s.cq,
		SQWR: 32, RQWR: 32, SendMaxSGE: 1, RecvMaxSGE: 1}); err != nil {
		return s, err
	}
	if s.buf, err = syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE); err != nil {
		return s, err
	}
	access := verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead
	if s.mr, err = s.pd.RegMR(uintptr(unsafe.Pointer(&s.buf[0])), 4096, access); err != nil {
		return s, err
	}
	g, err := s.ctx.QueryGID(1, 0)
	s.gid = g.GID
	return s, err
}

// openSides opens a side on emu0 and one on emu1; done closes what was
// opened (b, then a), after an error too.
func openSides() (a, b *side, done func(), err error) {
	done = func() {
		for _, s := range []*side{b, a} {
			if s != nil {
				s.close()
			}
		}
	}
	if a, err = openSide("emu0"); err == nil {
		b, err = openSide("emu1")
	}
	return a, b, done, err
}

// write RDMA-writes msg from the start of s's buffer to offset off of the
// peer's region dst and waits for the completion.
func (s *side) write(msg string, dst verbs.Region, off uint64) error {
	copy(s.buf, msg)
	err := s.qp.PostSend(verbs.SendWR{WRID: 1, Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: s.addr(), Length: uint32(len(msg)), LKey: s.mr.LKey()}},
		RemoteAddr: dst.Addr + off, RKey: dst.RKey})
	if err != nil {
		return err
	}
	wcs := make([]verbs.WC, 1)
	if _, err := s.cq.PollWait(wcs, 1, 5*time.Second); err != nil {
		return err
	}
	return wcs[0].Err()
}

func (s *side) addr() uint64 { return uint64(uintptr(unsafe.Pointer(&s.buf[0]))) }

// close releases everything, children before parents (a parent with live
// children would refuse with ErrInUse).
func (s *side) close() {
	report := func(err error) {
		if err != nil {
			fmt.Println(err)
		}
	}
	if s.mr != nil {
		report(s.mr.Close())
	}
	if s.qp != nil {
		report(s.qp.Close())
	}
	if s.cq != nil {
		report(s.cq.Close())
	}
	if s.dev != nil {
		report(s.dev.Close())
	}
	if s.pd != nil {
		report(s.pd.Close())
	}
	if s.buf != nil {
		report(syscall.Munmap(s.buf))
	}
	report(s.ctx.Close())
}

// connect moves qp from RST to RTS towards the peer QP with ConnectRC and
// the DOCA examples' defaults, except an RNR retry of 7.
func connect(qp *verbs.QP, peerQPN uint32, peerGID verbs.GID) error {
	local, err := qp.LocalEndpoint(1, 0)
	if err != nil {
		return err
	}
	return qp.ConnectRC(local, verbs.Endpoint{QPN: peerQPN, GID: peerGID}, &verbs.ConnectOptions{RNRRetry: verbs.Ptr[uint8](7)})
}

// Example connects an RC QP on emulated device emu0 to one on emu1, RDMA
// writes a message from emu0's buffer into emu1's and polls the completion.
func Example() {
	a, b, done, err := openSides()
	defer done()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Out of band, the two sides would exchange QPN, GID, address and rkey.
	if err := connect(a.qp, b.qp.QPN(), b.gid); err != nil {
		fmt.Println(err)
		return
	}
	if err := connect(b.qp, a.qp.QPN(), a.gid); err != nil {
		fmt.Println(err)
		return
	}
	msg := "hello, RDMA"
	copy(a.buf, msg)
	err = a.qp.PostSend(verbs.SendWR{
		WRID:       1,
		Opcode:     verbs.WRRDMAWrite,
		SGL:        []verbs.SGE{{Addr: a.addr(), Length: uint32(len(msg)), LKey: a.mr.LKey()}},
		RemoteAddr: b.addr() + 100,
		RKey:       b.mr.RKey(),
		Signaled:   true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	wcs := make([]verbs.WC, 1)
	if _, err := a.cq.PollWait(wcs, 1, 5*time.Second); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("completion: wrid=%d opcode=%v status=%v\n", wcs[0].WRID, wcs[0].Opcode, wcs[0].Status)
	fmt.Printf("emu1 buffer at +100: %q\n", b.buf[100:100+len(msg)])
	// Output:
	// completion: wrid=1 opcode=RDMA_WRITE status=IBV_WC_SUCCESS
	// emu1 buffer at +100: "hello, RDMA"
}

// ExampleOpenDevice opens an emulated device by its exact name and reads
// its port.
func ExampleOpenDevice() {
	ctx, err := verbs.OpenDevice("emu0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	port, err := ctx.QueryPort(1)
	if err != nil {
		fmt.Println(err)
		return
	}
	gid, err := ctx.QueryGID(1, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ctx.Name(), ctx.Driver(), port.State, port.LinkLayer, port.ActiveMTU, gid.Type)
	// Output: emu0 emu ACTIVE Ethernet 4096 RoCE v2
}

// Example_errors shows how failures read: the DOCA call, the DOCA code and
// the cause, matched with errors.Is.
func Example_errors() {
	ctx, err := verbs.OpenDevice("emu0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pd.Close()
	dev, err := verbs.OpenDev(pd)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	// A CQ that cannot be built fails with DOCA 3.0's code, wrapping the
	// specific one.
	_, err = dev.NewCQ(verbs.CQConfig{Size: 100})
	fmt.Println(err)
	fmt.Println(errors.Is(err, verbs.ErrInitialization), errors.Is(err, verbs.ErrInvalidValue))

	cq, err := dev.NewCQ(verbs.CQConfig{Size: 64})
	if err != nil {
		fmt.Println(err)
		return
	}
	qp, err := dev.NewQP(verbs.QPConfig{SendCQ: cq, SQWR: 8, SendMaxSGE: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = cq.Close() // the QP still completes on it
	fmt.Println(errors.Is(err, verbs.ErrInUse))
	for _, c := range []interface{ Close() error }{qp, cq} {
		if err := c.Close(); err != nil {
			fmt.Println(err)
		}
	}
	_, err = verbs.OpenDevice("mlx5_99")
	fmt.Println(errors.Is(err, verbs.ErrNotFound))
	// Output:
	// doca_verbs_cq_create: DOCA_ERROR_INITIALIZATION: size 100 is not a power of two: DOCA_ERROR_INVALID_VALUE
	// true true
	// true
	// true
}
