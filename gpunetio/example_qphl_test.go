package gpunetio_test

import (
	"fmt"
	"log"
	"time"
	"unsafe"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

// peer is one emulated RDMA device with a protection domain and the device
// object of DOCA GPUNetIO 3.0 (verbs.OpenDev), which objects are made on.
type peer struct {
	dev *verbs.Context
	pd  *verbs.PD
	net *verbs.Dev
}

func openPeer(name string) *peer {
	dev, err := verbs.OpenDevice(name)
	if err != nil {
		log.Fatal(err)
	}
	pd, err := dev.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	net, err := verbs.OpenDev(pd)
	if err != nil {
		log.Fatal(err)
	}
	return &peer{dev, pd, net}
}

func (p *peer) close() {
	if err := p.net.Close(); err != nil {
		log.Fatal(err)
	}
	if err := p.pd.Close(); err != nil {
		log.Fatal(err)
	}
	if err := p.dev.Close(); err != nil {
		log.Fatal(err)
	}
}

// Two high-level QPs, each a CQ and an RC QP with its rings in GPU memory,
// connected to each other: the host side of every GDAKI program. The
// endpoints travel in the byte format of the DOCA GPUNetIO examples (here
// through memory; between hosts over TCP, for example with
// verbs.ExchangeEndpointDOCA). NewHostGPU stands in for a GPU so that this
// runs anywhere; with gpunetio.NewGPU the code is the same and
// GPUQP().DeviceQP() is what a kernel takes (see Example_kernel).
func ExampleNewQPHL() {
	g := gpunetio.NewHostGPU() // on a GPU machine: gpunetio.NewGPU("8A:00.0")
	defer g.Close()
	a, b := openPeer("emu0"), openPeer("emu1")
	defer b.close()
	defer a.close()

	var qps [2]*gpunetio.QPHL
	var locals [2]verbs.LocalEndpoint
	var wire [2][]byte
	for i, p := range []*peer{a, b} {
		qp, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, NetDev: p.net, SQWQEs: 64})
		if err != nil {
			log.Fatal(err)
		}
		defer qp.Close()
		qps[i] = qp
		if locals[i], err = qp.LocalEndpoint(1, 0); err != nil { // port 1, GID index 0
			log.Fatal(err)
		}
		if wire[i], err = locals[i].MarshalDOCA(); err != nil {
			log.Fatal(err)
		}
	}
	for i, qp := range qps {
		remote, err := verbs.UnmarshalEndpointDOCA(wire[1-i], 0) // what the peer sent
		if err != nil {
			log.Fatal(err)
		}
		if err := qp.ConnectRC(locals[i], remote, nil); err != nil { // RST -> INIT -> RTR -> RTS
			log.Fatal(err)
		}
	}
	for i, qp := range qps {
		p, err := qp.GPUQP().DeviceQP()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("QP %d: %s, NIC handler %s, %d-byte endpoint, exported to the GPU: %t\n",
			i, qp.QP().State(), qp.NICHandler(), len(wire[i]), p != 0)
	}
	// Output:
	// QP 0: RTS, NIC handler GPU_SM_DB, 24-byte endpoint, exported to the GPU: true
	// QP 1: RTS, NIC handler GPU_SM_DB, 24-byte endpoint, exported to the GPU: true
}

// Register GPU memory for RDMA so that a peer can write into it. The
// region is named by the device address kernels use. Here the peer is a
// plain verbs QP posting from the host; with NewHostGPU the "GPU memory" is
// host memory, so the bytes can be read back directly.
func ExampleMem_RegMR() {
	g := gpunetio.NewHostGPU()
	defer g.Close()
	a, b := openPeer("emu0"), openPeer("emu1")
	defer b.close()
	defer a.close()

	// The target: memory the GPU and the CPU both see, on emu1.
	m, err := g.MemAlloc(4096, 0, gpunetio.MemCPUGPU)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Free()
	mr, err := m.RegMR(b.pd, verbs.AccessLocalWrite|verbs.AccessRemoteWrite, gpunetio.MemRegDefault)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()

	// The writer: a QP with host rings on emu0, and a registered source.
	qa, qb := hostQP(a), hostQP(b)
	defer closeHostQP(qb)
	defer closeHostQP(qa)
	connect(qa, qb, nil)
	connect(qb, qa, []verbs.Region{mr.Region()})
	src, err := g.MemAlloc(4096, 0, gpunetio.MemCPUGPU)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Free()
	srcMR, err := src.RegMR(a.pd, verbs.AccessLocalWrite, gpunetio.MemRegDefault)
	if err != nil {
		log.Fatal(err)
	}
	defer srcMR.Close()
	hb, _ := src.HostBytes()
	n := copy(hb, "written by emu0 into GPU-visible memory on emu1")

	region := mr.Region()
	if err := qa.PostSend(verbs.SendWR{Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: srcMR.IOVA(), Length: uint32(n), LKey: srcMR.LKey()}},
		RemoteAddr: region.Addr + 100, RKey: region.RKey}); err != nil {
		log.Fatal(err)
	}
	wc := make([]verbs.WC, 1)
	if _, err := qa.SendCQ().PollWait(wc, 1, 5*time.Second); err != nil {
		log.Fatal(err)
	}
	if err := wc[0].Err(); err != nil {
		log.Fatal(err)
	}
	dst, _ := m.HostBytes()
	fmt.Printf("%s (region at the device address: %t)\n", dst[100:100+n], region.Addr == uint64(m.Dev))
	// Output: written by emu0 into GPU-visible memory on emu1 (region at the device address: true)
}

func hostQP(p *peer) *verbs.QP {
	cq, err := p.net.NewCQ(verbs.CQConfig{Size: 16})
	if err != nil {
		log.Fatal(err)
	}
	qp, err := p.net.NewQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 8, RQWR: 8, SendMaxSGE: 1, RecvMaxSGE: 1})
	if err != nil {
		log.Fatal(err)
	}
	return qp
}

func closeHostQP(qp *verbs.QP) {
	cq := qp.SendCQ()
	if err := qp.Close(); err != nil {
		log.Fatal(err)
	}
	if err := cq.Close(); err != nil {
		log.Fatal(err)
	}
}

// connect moves qp to RTS towards peer, which offers regions.
func connect(qp, peer *verbs.QP, regions []verbs.Region) {
	local, err := qp.LocalEndpoint(1, 0)
	if err != nil {
		log.Fatal(err)
	}
	remote, err := peer.LocalEndpoint(1, 0)
	if err != nil {
		log.Fatal(err)
	}
	remote.Regions = regions
	if err := qp.ConnectRC(local, remote.Endpoint, nil); err != nil {
		log.Fatal(err)
	}
}

// A QP whose doorbell the GPU cannot ring itself (CPU_PROXY, or AUTO when
// the NIC's doorbell page cannot be mapped into the GPU) needs a CPU thread:
// a Service rings its doorbell whenever the kernel publishes new work.
func ExampleService() {
	g := gpunetio.NewHostGPU()
	defer g.Close()
	a := openPeer("emu0")
	defer a.close()
	qp, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, NetDev: a.net, SQWQEs: 64, NICHandler: gpunetio.NICHandlerCPUProxy})
	if err != nil {
		log.Fatal(err)
	}
	defer qp.Close()

	if qp.GPUQP().CPUAssisted() { // decide on the resolved handler, not the requested one
		svc, err := gpunetio.NewService()
		if err != nil {
			log.Fatal(err)
		}
		defer svc.Close() // before qp.Close: a monitored QP cannot be unexported
		if err := svc.Monitor(qp.GPUQP()); err != nil {
			log.Fatal(err)
		}
		fmt.Println("the service rings the doorbell of a", qp.NICHandler(), "QP")
	}
	// ... launch kernels that post on qp.GPUQP().DeviceQP() ...

	// Output: the service rings the doorbell of a CPU_PROXY QP
}

// Keys go to kernels in the device API's byte order.
func ExampleDeviceKey() {
	rkey := uint32(0x00012a07) // as verbs.MR.RKey reports it
	k := gpunetio.DeviceKey(rkey)
	fmt.Printf("%#08x in memory: % x\n", k, (*[4]byte)(unsafe.Pointer(&k))[:])
	// Output: 0x072a0100 in memory: 00 01 2a 07
}
