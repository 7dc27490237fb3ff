package gpunetio

// GPU tests: they need libcuda and a GPU and skip ("no CUDA driver")
// otherwise. Build them with `go test -c -o build/gpunetio.test ./gpunetio`
// and run with `-test.run GPU`. The NIC is the emulator (emu0/emu1), which
// reaches rings in GPU memory through internal/emugpu.

import (
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/gpuskip"
	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// realGPU opens GPU 0 by its PCIe address, or skips.
func realGPU(t testing.TB) *GPU {
	t.Helper()
	if err := cuda.Init(); err != nil {
		if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cuda.ErrNoDevice) {
			gpuskip.Skipf(t, "no CUDA driver: %v", err)
		}
		require.NoError(t, err)
	}
	d, err := cuda.DeviceGet(0)
	require.NoError(t, err)
	bus, err := d.PCIBusID()
	require.NoError(t, err)
	g, err := NewGPU(bus)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.Equal(t, 0, g.Live(), "GPU allocations leaked")
		require.NoError(t, g.Close())
	})
	return g
}

func TestGPUMemTypes(t *testing.T) {
	g := realGPU(t)
	pattern := []byte("0123456789abcdef")
	for _, typ := range []MemType{MemGPU, MemCPUGPU, MemGPUCPU} {
		t.Run(typ.String(), func(t *testing.T) {
			if typ == MemGPUCPU && !g.SupportsGDRCopy() {
				_, err := g.MemAlloc(4096, 0, typ)
				assert.ErrorIs(t, err, ErrNotSupported)
				assert.ErrorContains(t, err, "libgdrapi.so.2")
				t.Skip("no GDRCopy")
			}
			m, err := g.MemAlloc(1<<16, 0, typ)
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Free()) }()
			require.NoError(t, g.b.memcpyHtoD(uintptr(m.Dev), pattern))
			got := make([]byte, len(pattern))
			require.NoError(t, g.b.memcpyDtoH(got, uintptr(m.Dev)))
			assert.Equal(t, pattern, got)
			switch typ {
			case MemGPU:
				assert.Zero(t, m.Host)
			case MemCPUGPU:
				assert.Equal(t, pattern, hostSlice(m.Host, uintptr(len(pattern))), "host view")
				mmio.Store64(hostPtr(m.Host+64), 0x1122334455667788)
				require.NoError(t, g.b.memcpyDtoH(got[:8], uintptr(m.Dev)+64))
				assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, got[:8])
			case MemGPUCPU:
				assert.Equal(t, uint64(0x3736353433323130), mmio.Load64(hostPtr(m.Host)), "BAR1 view")
			}
		})
	}
	if g.SupportsDmabuf() {
		m, err := g.MemAlloc(1<<16, 0, MemGPU)
		require.NoError(t, err)
		fd, err := g.DmabufFD(m.Dev, 1<<16)
		if err == nil {
			assert.GreaterOrEqual(t, fd, 0)
			syscall.Close(fd)
		}
		require.NoError(t, m.Free())
	}
}

// stampSource is a kernel that writes n words value+i through a device
// pointer; TestGPUCUDAContext compiles it with NVRTC.
const stampSource = `
extern "C" __global__ void stamp(unsigned *out, unsigned value, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = value + i;
}
`

// TestGPUCUDAContext runs the GPU side of a program through the public API:
// the GPU's context, typed copies into gpunetio memory, and (with NVRTC) a
// kernel compiled from source writing into MemCPUGPU memory that the CPU
// reads through HostBytes.
func TestGPUCUDAContext(t *testing.T) {
	g := realGPU(t)
	ctx, err := g.CUDAContext()
	require.NoError(t, err)
	defer func() { require.NoError(t, ctx.Release()) }()
	bus, err := ctx.Device().PCIBusID()
	require.NoError(t, err)
	assert.Contains(t, g.String(), bus, "the context is the GPU's device")

	m, err := g.MemAlloc(4096, 0, MemGPU)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Free()) }()
	words := []uint32{1, 2, 3, 0xdeadbeef}
	require.NoError(t, cuda.CopyToDevice(ctx, m.Dev, words))
	back := make([]uint32, len(words))
	require.NoError(t, cuda.CopyFromDevice(ctx, back, m.Dev))
	assert.Equal(t, words, back)

	host, err := g.MemAlloc(4096, 0, MemCPUGPU)
	require.NoError(t, err)
	defer func() { require.NoError(t, host.Free()) }()
	view, err := host.HostBytes()
	require.NoError(t, err)

	dev := ctx.Device()
	out, err := cuda.Compile(stampSource, "stamp.cu", &cuda.CompileOptions{Device: &dev})
	if errors.Is(err, cuda.ErrNoNVRTC) {
		gpuskip.Skipf(t, "no NVRTC library for the kernel part: %v", err)
	}
	require.NoError(t, err)
	mod, err := ctx.ModuleLoadData(out.Image())
	require.NoError(t, err)
	defer func() { require.NoError(t, mod.Unload()) }()
	f, err := mod.Function("stamp")
	require.NoError(t, err)
	require.NoError(t, ctx.LaunchKernel(f, cuda.Dim3{X: 4}, cuda.Dim3{X: 256}, 0, nil, host.Dev, uint32(1000), uint32(1024)))
	require.NoError(t, ctx.Synchronize())
	for i := 0; i < 1024; i += 111 {
		assert.Equal(t, uint32(1000+i), binary.LittleEndian.Uint32(view[4*i:]), "word %d written by the kernel, read through HostBytes", i)
	}
	t.Logf("stamp compiled by NVRTC for %s (%d bytes of cubin, %d of PTX)", out.Arch, len(out.CUBIN), len(out.PTX))
}

// Export a QP whose rings are in GPU memory on an emulated device and check
// the device struct read back from GPU memory, field by field.
func TestGPUExportDeviceQP(t *testing.T) {
	g := realGPU(t)
	s := newSide(t, "emu0")
	for _, h := range []NICHandler{NICHandlerCPUProxy, NICHandlerAuto} {
		q, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 64, NICHandler: h})
		require.NoError(t, err)
		x := q.GPUQP()
		dev, err := x.DeviceQP()
		require.NoError(t, err)
		img := make([]byte, devstruct.QPSize)
		require.NoError(t, g.b.memcpyDtoH(img, uintptr(dev)))
		checkDeviceQP(t, img, q.QP(), q.CQ(), x.NICHandler())
		got, err := devstruct.DecodeQP(img)
		require.NoError(t, err)
		assert.Equal(t, x.template(), got)
		assert.Equal(t, uint64(q.SQRing().Dev), got.SQWQEDAddr, "SQ ring in GPU memory")
		assert.Equal(t, uint64(q.CQRing().Dev), got.CQ.CQEDAddr, "CQ ring in GPU memory")
		ring := make([]byte, 64*64)
		require.NoError(t, g.b.memcpyDtoH(ring, uintptr(q.CQRing().Dev)))
		for i := 0; i < 64; i++ {
			assert.Equal(t, byte(0xf1), ring[i*64+63])
		}
		require.NoError(t, q.Close())
	}
}

// gpuWaitCQE polls the CQ ring in GPU memory for the CQE of WQE i.
func gpuWaitCQE(t testing.TB, g *GPU, p *hlPair, i uint32, progress func()) mlx5.CQE {
	t.Helper()
	ring := uintptr(p.hl.CQRing().Dev)
	buf := make([]byte, 64)
	return p.pollCQE(t, i, progress, func(off uintptr) []byte {
		require.NoError(t, g.b.memcpyDtoH(buf, ring+off))
		return buf
	})
}

// gpuPostWrite writes one signaled RDMA WRITE WQE into the SQ ring in GPU
// memory with a host-to-device copy.
func gpuPostWrite(t testing.TB, g *GPU, p *hlPair, idx uint16, src, dst, n int) {
	t.Helper()
	wqe := writeWQE(t, p, idx, src, dst, n)
	off := uintptr(idx&uint16(p.hl.SQWQEs()-1)) * 64
	require.NoError(t, g.b.memcpyHtoD(uintptr(p.hl.SQRing().Dev)+off, wqe))
}

func writeWQE(t testing.TB, p *hlPair, idx uint16, src, dst, n int) []byte {
	w := mlx5.NewRDMAWrite(mlx5.WQEHead{Index: idx, QPN: p.hl.QP().QPN(), Flags: mlx5.CtrlCQUpdate},
		mlx5.RAddrSeg{Addr: p.b.addr(dst), RKey: p.b.mr.RKey()},
		mlx5.DataSeg{ByteCount: uint32(n), LKey: p.a.mr.LKey(), Addr: p.a.addr(src)})
	b := make([]byte, 64)
	_, err := w.Encode(b)
	require.NoError(t, err)
	return b
}

func TestGPUProxyAndService(t *testing.T) {
	g := realGPU(t)
	p := newHLPair(t, g, QPHLConfig{SQWQEs: 16, NICHandler: NICHandlerCPUProxy})
	q := p.hl.GPUQP()
	_, err := q.DeviceQP()
	require.NoError(t, err)
	for i := 0; i < 4; i++ {
		p.a.buf[i] = byte(0x30 + i)
		gpuPostWrite(t, g, p, uint16(i), i, 1000+i, 1)
		storeMailbox(q, uint64(i+1))
		gpuWaitCQE(t, g, p, uint32(i), func() { q.ProgressProxy() })
		assert.Equal(t, byte(0x30+i), p.b.buf[1000+i])
	}
	svc, err := NewService()
	require.NoError(t, err)
	require.NoError(t, svc.Monitor(q))
	for i := 4; i < 24; i++ {
		p.a.buf[i] = byte(0x30 + i)
		gpuPostWrite(t, g, p, uint16(i), i, 1000+i, 1)
		storeMailbox(q, uint64(i+1))
		c := gpuWaitCQE(t, g, p, uint32(i), nil)
		assert.Equal(t, mlx5.CQEReq, c.Opcode)
		assert.Equal(t, byte(0x30+i), p.b.buf[1000+i])
	}
	require.NoError(t, svc.Close())
}

// postWQEPTX is a hand-written kernel: one thread copies a 64-byte WQE into
// the SQ ring slot, makes it visible system-wide and stores the producer
// index into the CPU-proxy mailbox.
const postWQEPTX = `
.version 7.0
.target sm_70
.address_size 64

.visible .entry post_wqe(
	.param .u64 slot,
	.param .u64 wqe,
	.param .u64 mailbox,
	.param .u64 pi
)
{
	.reg .b64 %rd<14>;

	ld.param.u64 %rd1, [slot];
	ld.param.u64 %rd2, [wqe];
	ld.param.u64 %rd3, [mailbox];
	ld.param.u64 %rd4, [pi];
	cvta.to.global.u64 %rd5, %rd1;
	cvta.to.global.u64 %rd6, %rd2;
	cvta.to.global.u64 %rd7, %rd3;
	ld.global.u64 %rd8, [%rd6];
	st.global.u64 [%rd5], %rd8;
	ld.global.u64 %rd8, [%rd6+8];
	st.global.u64 [%rd5+8], %rd8;
	ld.global.u64 %rd8, [%rd6+16];
	st.global.u64 [%rd5+16], %rd8;
	ld.global.u64 %rd8, [%rd6+24];
	st.global.u64 [%rd5+24], %rd8;
	ld.global.u64 %rd8, [%rd6+32];
	st.global.u64 [%rd5+32], %rd8;
	ld.global.u64 %rd8, [%rd6+40];
	st.global.u64 [%rd5+40], %rd8;
	ld.global.u64 %rd8, [%rd6+48];
	st.global.u64 [%rd5+48], %rd8;
	ld.global.u64 %rd8, [%rd6+56];
	st.global.u64 [%rd5+56], %rd8;
	membar.sys;
	st.volatile.global.u64 [%rd7], %rd4;
	ret;
}
`

// A kernel loaded from Go posts a WQE by hand; the CPU proxy rings the
// emulated NIC, which completes it and moves the data.
func TestGPUKernelPostsWQE(t *testing.T) {
	g := realGPU(t)
	cb, ok := g.b.(*cudaBackend)
	require.True(t, ok)
	ctx := cb.ctx
	p := newHLPair(t, g, QPHLConfig{SQWQEs: 8, NICHandler: NICHandlerCPUProxy})
	q := p.hl.GPUQP()
	_, err := q.DeviceQP()
	require.NoError(t, err)

	mod, err := ctx.ModuleLoadData([]byte(postWQEPTX))
	require.NoError(t, err)
	defer mod.Unload()
	fn, err := mod.Function("post_wqe")
	require.NoError(t, err)
	stream, err := ctx.NewStream(cuda.StreamNonBlocking)
	require.NoError(t, err)
	defer stream.Destroy()
	src, err := g.MemAlloc(64, 0, MemGPU)
	require.NoError(t, err)
	defer src.Free()

	copy(p.a.buf[512:], "written by a kernel")
	require.NoError(t, g.b.memcpyHtoD(uintptr(src.Dev), writeWQE(t, p, 0, 512, 3000, 19)))
	mailboxDev := DevPtr(q.template().SQDB)
	require.NoError(t, ctx.LaunchKernel(fn, cuda.Dim3{X: 1}, cuda.Dim3{X: 1}, 0, stream,
		uintptr(p.hl.SQRing().Dev), uintptr(src.Dev), uintptr(mailboxDev), uint64(1)))
	require.NoError(t, stream.Wait(10*time.Second))
	assert.Equal(t, uint64(1), mmio.Load64(hostPtr(q.ProxyMailbox())), "the kernel stored the PI")
	c := gpuWaitCQE(t, g, p, 0, func() { q.ProgressProxy() })
	assert.Equal(t, mlx5.CQEReq, c.Opcode)
	assert.Equal(t, "written by a kernel", string(p.b.buf[3000:3019]))
}
