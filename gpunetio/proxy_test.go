package gpunetio

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/internal/mmio"
)

// The CPU proxy end to end: WQEs written into the SQ ring by hand, the PI
// stored into the mailbox, ProgressProxy rings, the emulated NIC executes the
// RDMA WRITEs and the CQEs appear in the GPU-polled CQ ring.
func TestCPUProxyEndToEnd(t *testing.T) {
	for _, ext := range []SendDBRModeExt{SendDBRValid, SendNoDBRHW, SendNoDBRSWEmulated} {
		t.Run(ext.String(), func(t *testing.T) {
			p, q := hostPair(t, QPHLConfig{SQWQEs: 20, NICHandler: NICHandlerCPUProxy, SendDBRModeExt: ext})
			require.Equal(t, NICHandlerCPUProxy, q.NICHandler())
			require.True(t, q.CPUAssisted())
			assert.Equal(t, uint32(32), p.hl.SQWQEs())
			_, err := q.DeviceQP()
			require.NoError(t, err)

			progressed, err := q.ProgressProxy()
			require.NoError(t, err)
			assert.False(t, progressed, "nothing posted yet")

			for i := 0; i < 40; i++ { // wraps the 32-entry ring
				copy(p.a.buf[i*64:], []byte("payload-"))
				p.a.buf[i*64+8] = byte(i)
				p.postWrite(t, uint16(i), i*64, 4096+i*64, 9, p.b.mr.RKey())
				storeMailbox(q, uint64(i+1))
				progressed, err := q.ProgressProxy()
				require.NoError(t, err)
				assert.True(t, progressed)
				c := p.waitCQE(t, uint32(i), nil)
				assert.Equal(t, mlx5.CQEReq, c.Opcode)
				assert.Equal(t, uint16(i), c.WQECounter)
				assert.Equal(t, append([]byte("payload-"), byte(i)), p.b.buf[4096+i*64:4096+i*64+9])
				if ext != SendNoDBRHW {
					dbr := hostSlice(uintptr(p.hl.QP().DBRAddr())+4, 4)
					assert.Equal(t, uint32(i+1), be32At(dbr), "send DBR")
				}
			}
			progressed, err = q.ProgressProxy()
			require.NoError(t, err)
			assert.False(t, progressed, "mailbox unchanged")
		})
	}
}

// Mode B: a GPU-SM QP with SW-emulated no-DBR. The "kernel" rings the
// doorbell itself and advances sq_wqe_pi; the CPU helper keeps the DBR
// current and reports no progress.
func TestSWEmulatedHelper(t *testing.T) {
	p, q := hostPair(t, QPHLConfig{SQWQEs: 16, NICHandler: NICHandlerAuto, SendDBRModeExt: SendNoDBRSWEmulated})
	require.Equal(t, NICHandlerGPUSMNoDBR, q.NICHandler())
	require.True(t, q.CPUAssisted())
	_, err := q.ProgressProxy()
	assert.ErrorIs(t, err, ErrBadState, "no device QP yet")
	dev, err := q.DeviceQP()
	require.NoError(t, err)

	copy(p.a.buf, "mode-b")
	p.postWrite(t, 0, 0, 100, 6, p.b.mr.RKey())
	mmio.Store64(hostPtr(uintptr(dev)+16), 1) // sq_wqe_pi, as submit does
	mmio.Store64(hostPtr(p.hl.QP().DoorbellAddr()), mlx5.SQDoorbellPI(p.hl.QP().QPN(), 1).Uint64())
	progressed, err := q.ProgressProxy()
	require.NoError(t, err)
	assert.False(t, progressed, "mode B never reports progress")
	assert.Equal(t, uint32(1), be32At(hostSlice(p.hl.QP().DBRAddr()+4, 4)))
	c := p.waitCQE(t, 0, nil)
	assert.Equal(t, mlx5.CQEReq, c.Opcode)
	assert.Equal(t, "mode-b", string(p.b.buf[100:106]))
}

func TestProgressNotSupported(t *testing.T) {
	s := newSide(t, "emu0")
	g, _ := hostGPU(t)
	vqp, cq := plainQP(t, s, 0, nil)
	q, err := g.ExportQP(vqp, cq, nil, ExportConfig{NICHandler: NICHandlerGPUSMDB})
	require.NoError(t, err)
	defer q.Close()
	_, err = q.ProgressProxy()
	assert.ErrorIs(t, err, ErrNotSupported)
	var nilQP *QP
	_, err = nilQP.ProgressProxy()
	assert.ErrorIs(t, err, ErrInvalidValue)
}

// The service progresses monitored QPs in the background and Close stops
// its goroutine.
func TestServiceProgressesAndStops(t *testing.T) {
	g, _ := hostGPU(t)
	p1 := newHLPair(t, g, QPHLConfig{SQWQEs: 16, NICHandler: NICHandlerCPUProxy})
	before := runtime.NumGoroutine()
	svc, err := NewService()
	require.NoError(t, err)
	q := p1.hl.GPUQP()
	require.NoError(t, svc.Monitor(q))
	require.NoError(t, svc.Monitor(q), "twice is harmless")
	assert.ErrorIs(t, q.Close(), ErrInUse, "monitored QPs cannot be unexported")

	for i := 0; i < 20; i++ {
		p1.a.buf[i] = byte(0x40 + i)
		p1.postWrite(t, uint16(i), i, 2000+i, 1, p1.b.mr.RKey())
		storeMailbox(q, uint64(i+1))
		p1.waitCQE(t, uint32(i), nil)
		assert.Equal(t, byte(0x40+i), p1.b.buf[2000+i])
	}
	require.NoError(t, svc.Unmonitor(q))
	assert.ErrorIs(t, svc.Unmonitor(q), ErrNotFound)
	require.NoError(t, svc.Monitor(q))
	require.NoError(t, svc.Close())
	require.NoError(t, svc.Close())
	assert.ErrorIs(t, svc.Monitor(q), ErrBadState)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "service goroutine leaked")
}

// An idle service sleeps instead of spinning.
func TestServiceIdleBackoff(t *testing.T) {
	svc, err := NewService()
	require.NoError(t, err)
	defer svc.Close()
	time.Sleep(50 * time.Millisecond)
	r1 := svc.rounds.Load()
	time.Sleep(100 * time.Millisecond)
	r2 := svc.rounds.Load()
	// At most one round per 50 us when idle, far fewer once backed off to 1 ms.
	assert.Less(t, r2-r1, uint64(2000), "idle rounds in 100 ms")
}
