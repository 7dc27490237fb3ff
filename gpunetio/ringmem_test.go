package gpunetio

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With RingMem MemCPUGPU the high-level QP's rings are pinned host memory
// mapped into the GPU, registered with the NIC at their CPU address, and
// the QP moves data as with device memory.
func TestQPHLRingsInCPUGPUMemory(t *testing.T) {
	for _, h := range []NICHandler{NICHandlerCPUProxy, NICHandlerGPUSMDB} {
		t.Run(h.String(), func(t *testing.T) {
			p, q := hostPair(t, QPHLConfig{SQWQEs: 8, NICHandler: h, RingMem: MemCPUGPU})
			for _, m := range []*Mem{p.hl.SQRing(), p.hl.CQRing()} {
				assert.Equal(t, MemCPUGPU, m.Type)
				assert.NotZero(t, m.Host, "CPU_GPU memory has a CPU address")
			}
			assert.Equal(t, p.hl.SQRing().Host, p.hl.sqRingU.Addr(), "the SQ UMEM is the ring's CPU address")
			assert.Equal(t, p.hl.CQRing().Host, p.hl.cqRingU.Addr(), "the CQ UMEM is the ring's CPU address")
			if h == NICHandlerGPUSMDB {
				require.NotNil(t, p.hl.sqDBR)
				assert.Equal(t, MemCPUGPU, p.hl.sqDBR.Type, "the GPU-written doorbell record too")
			}

			if h != NICHandlerCPUProxy {
				return // the data path of device code is the GPU suite's
			}
			copy(p.a.buf[:8], "ringmem!")
			p.postWrite(t, 0, 0, 64, 8, p.b.mr.RKey())
			storeMailbox(q, 1)
			_, err := q.ProgressProxy()
			require.NoError(t, err)
			c := p.waitCQE(t, 0, nil)
			require.False(t, c.Opcode.IsError(), "opcode %v", c.Opcode)
			assert.Equal(t, "ringmem!", string(p.b.buf[64:72]))
		})
	}
}

func TestQPHLRingMemRefused(t *testing.T) {
	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	for _, mt := range []MemType{MemGPUCPU, MemType(9)} {
		_, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, NICHandler: NICHandlerCPUProxy, RingMem: mt})
		require.ErrorIs(t, err, ErrInvalidValue, "%v", mt)
		assert.Contains(t, err.Error(), "RingMem")
	}
}
