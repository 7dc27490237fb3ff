package devhost

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// setNICHandler writes the QP's nic_handler word as a host would export it.
func (h *HostQP) setNICHandler(v int32) {
	*(*int32)(unsafe.Add(unsafe.Pointer(h.p), devstruct.OffsetNICHandler)) = v
}

// TestFamilyNICHandlerNumbering: a build without GDAKI_DOCA_FAMILY_SDK numbers the NIC handlers
// as the open-source headers do (BF 6, NO_DBR 10, CPU_PROXY_NO_DBR 9), one with it as the SDK
// does (3, 4, 5); gdaki_dev_qp_nic_handler maps a QP exported with either numbering onto the
// build's own in the SDK build, and leaves the value alone in the open build.
func TestFamilyNICHandlerNumbering(t *testing.T) {
	open := []int{0, 1, 2, 6, 10, 9}
	sdk := []int{0, 1, 2, 3, 4, 5}
	for which := range open {
		assert.Equalf(t, open[which], NICHandlerValue(FamilyOpen, which), "open build, handler %d", which)
		assert.Equalf(t, sdk[which], NICHandlerValue(FamilySDK, which), "SDK build, handler %d", which)
	}
	assert.Equal(t, -1, NICHandlerValue(FamilySDK, 6))

	q := newHostQP(t, HostConfig{SQWQEs: 8})
	for _, tc := range []struct{ exported, sdk, open int32 }{
		{6, 3, 6},   // our host's GPU_SM_BF
		{3, 3, 3},   // the SDK host's GPU_SM_BF
		{10, 4, 10}, // our host's GPU_SM_NO_DBR
		{4, 4, 4},   // the SDK host's GPU_SM_NO_DBR
		{9, 5, 9},   // our host's CPU_PROXY_NO_DBR
		{2, 2, 2},   // GPU_SM_DB: one value in both
		{1, 1, 1},   // CPU_PROXY
	} {
		q.setNICHandler(tc.exported)
		assert.Equalf(t, int(tc.sdk), q.QPNICHandler(FamilySDK), "SDK build reading %d", tc.exported)
		assert.Equalf(t, int(tc.open), q.QPNICHandler(FamilyOpen), "open build reading %d", tc.exported)
	}
}

// TestFamilyLowLevelWrites: the same RDMA WRITE built with the SDK's spellings and with the
// open-source ones; the SDK's ctrl-segment type reads the bytes the builder wrote, and the
// open-source FENCE is fence mode 2.
func TestFamilyLowLevelWrites(t *testing.T) {
	q := newHostQP(t, HostConfig{SQWQEs: 8, Handler: HandlerGPUSMDB})
	r := Addr{Addr: 0x1000, Key: key(7)}
	l := Addr{Addr: 0x2000, Key: key(9)}
	fl, tk := q.SDK33WriteLowLevel(r, l, 64)
	assert.Equal(t, uint64(0), tk)
	assert.Equal(t, uint32(0x08), fl, "DOCA_GPUNETIO_MLX5_WQE_CTRL_CQ_UPDATE read through struct doca_gpu_dev_verbs_wqe_ctrl_seg")
	idx, op, ds, flags := ctrlOf(q.WQE(0))
	assert.Equal(t, [4]uint32{0, 0x08, 3, 0x08}, [4]uint32{uint32(idx), uint32(op), uint32(ds), uint32(flags)})
	assert.NotZero(t, q.Doorbell(), "submit_db<EXCL, GPU, CODE_OPT_DEFAULT> rang the doorbell")
	assert.Equal(t, uint32(1)<<24, q.DBR(), "DBR = BE32(1)")

	fl, tk = q.OSWriteFenced(r, l, 64)
	assert.Equal(t, uint64(1), tk)
	assert.Equal(t, uint32(0x48), fl, "CQ_UPDATE | DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE (fence mode 2)")
}

// TestFamilyWaitByPointer: the SDK's wait(qp, &ticket) blocks until the CQE of the ticket is
// there, as wait(qp, ticket) does.
func TestFamilyWaitByPointer(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(q *HostQP) uint64
	}{
		{"SDK 3.2 put+wait(&ticket)", func(q *HostQP) uint64 { return q.SDK32PutWait(Addr{1, 2}, Addr{3, 4}, 8) }},
		{"open put+wait(ticket)", func(q *HostQP) uint64 { return q.OSPutWait(Addr{1, 2}, Addr{3, 4}, 8) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newHostQP(t, HostConfig{SQWQEs: 8, Handler: HandlerGPUSMDB})
			done := make(chan uint64, 1)
			go func() { done <- tc.run(q) }()
			// The put is posted (its doorbell rung) before the wait starts; the wait then needs
			// the CQE, which only this goroutine writes.
			for q.Doorbell() == 0 {
				select {
				case tk := <-done:
					t.Fatalf("returned ticket %d before the doorbell", tk)
				default:
				}
			}
			select {
			case tk := <-done:
				t.Fatalf("wait returned ticket %d before its completion", tk)
			default:
			}
			q.Complete(0, CQEOpReq, 0)
			assert.Equal(t, uint64(0), <-done)
			_, op, _, _ := ctrlOf(q.WQE(0))
			require.Equal(t, uint8(0x08), op, "an RDMA WRITE")
		})
	}
}
