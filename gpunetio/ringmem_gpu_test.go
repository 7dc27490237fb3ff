package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// On a real GPU, a CPU-proxy high-level QP whose rings are CPU_GPU memory
// (RingMem) moves data like one with rings in device memory: the WQEs are
// written through the rings' GPU addresses, the NIC reads them at their
// CPU addresses.
func TestGPURingsInCPUGPUMemory(t *testing.T) {
	g := realGPU(t)
	p := newHLPair(t, g, QPHLConfig{SQWQEs: 16, NICHandler: NICHandlerCPUProxy, RingMem: MemCPUGPU})
	for _, m := range []*Mem{p.hl.SQRing(), p.hl.CQRing()} {
		require.Equal(t, MemCPUGPU, m.Type)
		require.NotZero(t, m.Host)
	}
	q := p.hl.GPUQP()
	_, err := q.DeviceQP()
	require.NoError(t, err)
	for i := 0; i < 8; i++ {
		p.a.buf[i] = byte(0x50 + i)
		gpuPostWrite(t, g, p, uint16(i), i, 2000+i, 1)
		storeMailbox(q, uint64(i+1))
		c := gpuWaitCQE(t, g, p, uint32(i), func() { q.ProgressProxy() })
		assert.Equal(t, mlx5.CQEReq, c.Opcode)
		assert.Equal(t, byte(0x50+i), p.b.buf[2000+i])
	}
}
