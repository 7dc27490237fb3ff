package integration

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devhost"
	"github.com/gdaki/gpunetio/internal/devstruct"
)

// familyBound bounds each family kernel's own wait on the emulator.
const familyBound = 20 * time.Second

// TestFamilyKernelsOnEmulator runs the corpus kernels of each DOCA family
// (cuda/test/corpus, compiled as host C++ by internal/devhost) on emu0
// against emu1 in each NIC handler: the SDK 3.2 put + wait by pointer, the
// SDK 3.4 put + NOP, the open-source put + wait by value, the SDK 3.3
// p_signal, NCCL's get + mcst; every byte arrives and every wait returns.
func TestFamilyKernelsOnEmulator(t *testing.T) {
	cases := append([]handlerCase{}, handlers...)
	cases = append(cases, handlerCase{"CPU_PROXY_NO_DBR", gpunetio.NICHandlerCPUProxyNoDBR, gpunetio.SendDBRValid, devhost.HandlerAuto})
	for _, hc := range cases {
		t.Run(hc.name, func(t *testing.T) {
			g := gpunetio.NewHostGPU()
			t.Cleanup(func() { require.NoError(t, g.Close()) })
			a := newSide(t, g, "emu0", hc.qp, hc.ext)
			b := newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
			connect(t, a, b)
			connect(t, b, a)
			serve(t, a.hl)
			q := devQP(t, a)
			if hc.qp == gpunetio.NICHandlerCPUProxyNoDBR {
				assert.Equal(t, 9, q.QPNICHandler(devhost.FamilyOpen), "exported CPU_PROXY_NO_DBR")
				assert.Equal(t, 5, q.QPNICHandler(devhost.FamilySDK), "as an SDK-family build numbers it")
			}
			for i := 0; i < 4096; i++ {
				a.buf[i] = byte(i*13 + 1)
			}
			returnsWithin(t, familyBound, "SDK 3.2 put+wait(&ticket)", func() { q.SDK32PutWait(b.addr(0), a.laddr(0), 1024) })
			assert.Equal(t, a.buf[:1024], b.buf[:1024], "SDK 3.2 put")
			returnsWithin(t, familyBound, "SDK 3.4 put+NOP", func() { q.SDK34PutNOP(b.addr(1024), a.laddr(1024), 1024) })
			assert.Equal(t, a.buf[1024:2048], b.buf[1024:2048], "SDK 3.4 put")
			returnsWithin(t, familyBound, "open put+wait(ticket)", func() { q.OSPutWait(b.addr(2048), a.laddr(2048), 2048) })
			assert.Equal(t, a.buf[2048:4096], b.buf[2048:4096], "open-source put")

			returnsWithin(t, familyBound, "SDK 3.3 p_signal", func() {
				q.SDK33PSignal(b.addr(8192), 0x0102030405060708, b.addr(8200), a.laddr(8200), 3)
			})
			assert.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1}, b.buf[8192:8200], "p_signal value")
			assert.Equal(t, byte(3), b.buf[8200], "p_signal added 3")

			copy(b.buf[16384:], "fetched by NCCL's get")
			returnsWithin(t, familyBound, "NCCL get+mcst", func() {
				q.NCCLGetMCST(b.addr(16384), a.laddr(16384), 21, a.laddr(20000))
			})
			assert.Equal(t, "fetched by NCCL's get", string(a.buf[16384:16405]))
		})
	}
}

// TestFamilyNICHandlerSDKNumbering: a QP whose nic_handler carries the
// SDK's GPU_SM_BF number (3) is submitted through the DB path by an
// SDK-family build with AUTO (the SDK 3.4 corpus put), as one carrying ours
// (6) is.
func TestFamilyNICHandlerSDKNumbering(t *testing.T) {
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a := newSide(t, g, "emu0", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	b := newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
	connect(t, a, b)
	connect(t, b, a)
	p, err := a.hl.GPUQP().DeviceQP()
	require.NoError(t, err)
	q := devQP(t, a)
	*(*int32)(unsafe.Add(*(*unsafe.Pointer)(unsafe.Pointer(&p)), devstruct.OffsetNICHandler)) = 3
	assert.Equal(t, 3, q.QPNICHandler(devhost.FamilySDK))
	copy(a.buf, "through the SDK's numbering")
	returnsWithin(t, familyBound, "SDK 3.4 put on nic_handler 3", func() { q.SDK34PutNOP(b.addr(0), a.laddr(0), 27) })
	assert.Equal(t, "through the SDK's numbering", string(b.buf[:27]))
}

// TestFamilyCounterOnEmulator: the SDK 3.3 put_counter (execution scope as a
// template argument) and the open-source one (trailing code option) on a QP
// group: the data arrives and the counter counts both.
func TestFamilyCounterOnEmulator(t *testing.T) {
	g := gpunetio.NewHostGPU()
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	a := newSide(t, g, "emu0", gpunetio.NICHandlerGPUSMDB, gpunetio.SendDBRValid)
	b := newSide(t, g, "emu1", gpunetio.NICHandlerAuto, gpunetio.SendDBRValid)
	grp, err := gpunetio.NewQPGroupHL(gpunetio.QPHLConfig{GPU: g, PD: a.pd, SQWQEs: 64, NICHandler: gpunetio.NICHandlerGPUSMDB})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, grp.Close()) })
	for _, q := range []*gpunetio.QPHL{grp.Main, grp.Companion} {
		peer, err := gpunetio.NewQPHL(gpunetio.QPHLConfig{GPU: g, PD: b.pd, SQWQEs: 64, NICHandler: gpunetio.NICHandlerAuto})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, peer.Close()) })
		connectQP(t, q.QP(), peer.QP().QPN(), b.gid, 14, 7)
		connectQP(t, peer.QP(), q.QP().QPN(), a.gid, 14, 7)
	}
	main, comp := devQP(t, &side{hl: grp.Main}), devQP(t, &side{hl: grp.Companion})
	copy(a.buf, "counted by the SDK's put_counter")
	copy(a.buf[4096:], "counted by the open-source put_counter")
	returnsWithin(t, familyBound, "SDK 3.3 put_counter", func() {
		main.SDK33PutCounter(b.addr(0), a.laddr(0), 32, comp, b.addr(65536), a.laddr(65536), 1)
	})
	returnsWithin(t, familyBound, "open-source put_counter", func() {
		main.OSPutCounter(b.addr(4096), a.laddr(4096), 38, comp, b.addr(65536), a.laddr(65536), 1)
	})
	assert.Equal(t, "counted by the SDK's put_counter", string(b.buf[:32]))
	assert.Equal(t, "counted by the open-source put_counter", string(b.buf[4096:4134]))
	assert.Equal(t, byte(2), b.buf[65536], "the counter counted both")
}
