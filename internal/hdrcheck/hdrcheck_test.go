package hdrcheck_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/internal/devstruct"
	"github.com/gdaki/gpunetio/internal/hdrcheck"
	"github.com/gdaki/gpunetio/internal/mlx5"
	"github.com/gdaki/gpunetio/verbs"
)

// cqCIMask is the CQ consumer-index mask mlx5 applies to a doorbell record.
func cqCIMask() int64 {
	dbr := make([]byte, 8)
	mlx5.PutCQDBRCI(dbr, ^uint32(0))
	return int64(mlx5.CQDBRCI(dbr))
}

// goValues maps every header constant to the Go definition that mirrors it.
func goValues() map[string]int64 {
	ctrl := func(fm mlx5.FenceMode, ce mlx5.CompletionMode) int64 {
		return int64(mlx5.MakeCtrlFlags(fm, ce, false))
	}
	return map[string]int64{
		"DOCA_GPUNETIO_VERSION_MAJOR":                                       gpunetio.VersionMajor,
		"DOCA_GPUNETIO_VERSION_MINOR":                                       gpunetio.VersionMinor,
		"DOCA_GPUNETIO_VERSION_PATCH":                                       gpunetio.VersionPatch,
		"DOCA_GPUNETIO_VERSION":                                             gpunetio.Version,
		"DOCA_GPUNETIO_DEVICE_CODE_VERSION":                                 gpunetio.DeviceCodeVersion,
		"DOCA_GPUNETIO_HOST_CODE_VERSION":                                   gpunetio.HostCodeVersion,
		"DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION":                      gpunetio.MinCompatDeviceCodeVersion,
		"DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION":                        gpunetio.MinCompatHostCodeVersion,
		"DOCA_GPUNETIO_VERBS_CQE_CI_MASK":                                   cqCIMask(),
		"DOCA_GPUNETIO_VERBS_CQE_SIZE":                                      mlx5.CQESize,
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_NOP":                                  int64(mlx5.WQEOpNop),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_INVAL":                           int64(mlx5.WQEOpSendInval),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE":                           int64(mlx5.WQEOpRDMAWrite),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_WRITE_IMM":                       int64(mlx5.WQEOpRDMAWriteImm),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND":                                 int64(mlx5.WQEOpSend),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_SEND_IMM":                             int64(mlx5.WQEOpSendImm),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_TSO":                                  int64(mlx5.WQEOpTSO),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_RDMA_READ":                            int64(mlx5.WQEOpRDMARead),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_CS":                            int64(mlx5.WQEOpAtomicCS),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_FA":                            int64(mlx5.WQEOpAtomicFA),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_CS":                     int64(mlx5.WQEOpAtomicMaskedCS),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_ATOMIC_MASKED_FA":                     int64(mlx5.WQEOpAtomicMaskedFA),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_FMR":                                  int64(mlx5.WQEOpFMR),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_LOCAL_INVAL":                          int64(mlx5.WQEOpLocalInval),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_WAIT":                                 int64(mlx5.WQEOpWait),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_CONFIG_CMD":                           int64(mlx5.WQEOpConfigCmd),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_SET_PSV":                              int64(mlx5.WQEOpSetPSV),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_DUMP":                                 int64(mlx5.WQEOpDump),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_UMR":                                  int64(mlx5.WQEOpUMR),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_TAG_MATCHING":                         int64(mlx5.WQEOpTagMatching),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_FLOW_TBL_ACCESS":                      int64(mlx5.WQEOpFlowTblAccess),
		"DOCA_GPUNETIO_IB_MLX5_OPCODE_MMO":                                  int64(mlx5.WQEOpMMO),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_CQE_ERROR":                int64(mlx5.CompletionOnError),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ON_FIRST_CQE_ERROR":          int64(mlx5.CompletionOnFirstError),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_ALWAYS":                      int64(mlx5.CompletionAlways),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CE_CQE_AND_EQE":                     int64(mlx5.CompletionAndEvent),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_NO_FENCE":                        int64(mlx5.FenceNone),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_INITIATOR_SMALL_FENCE":           int64(mlx5.FenceInitiatorSmall),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE":                           int64(mlx5.Fence),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_STRONG_ORDERING":                 int64(mlx5.FenceStrongOrdering),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FM_FENCE_AND_INITIATOR_SMALL_FENCE": int64(mlx5.FenceAndInitiatorSmallFence),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE":                          int64(mlx5.CtrlCQUpdate),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_ERROR_UPDATE":                    ctrl(mlx5.FenceNone, mlx5.CompletionOnError),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_FIRST_CQE_ERROR":                 int64(mlx5.CtrlFirstCQEError),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_SOLICITED":                          int64(mlx5.CtrlSolicited),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_FENCE":                              int64(mlx5.CtrlFence),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE":              int64(mlx5.CtrlInitiatorSmallFence),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_STRONG_ORDERING":                    int64(mlx5.CtrlStrongOrdering),
		"DOCA_GPUNETIO_IB_MLX5_WQE_CTRL_CQ_UPDATE_FENCE":                    int64(mlx5.CtrlCQUpdateFence),
		"DOCA_GPUNETIO_IB_MLX5_INLINE_SEG":                                  int64(mlx5.InlineFlag),
		"DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK":                              int64(mlx5.CQEOwnerBit(1, 0)),
		"DOCA_GPUNETIO_IB_MLX5_CQE_REQ":                                     int64(mlx5.CQEReq),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESP_WR_IMM":                             int64(mlx5.CQERespWrImm),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND":                               int64(mlx5.CQERespSend),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND_IMM":                           int64(mlx5.CQERespSendImm),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESP_SEND_INV":                           int64(mlx5.CQERespSendInv),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESIZE_CQ":                               int64(mlx5.CQEResizeCQ),
		"DOCA_GPUNETIO_IB_MLX5_CQE_NO_PACKET":                               int64(mlx5.CQENoPacket),
		"DOCA_GPUNETIO_IB_MLX5_CQE_SIG_ERR":                                 int64(mlx5.CQESigErr),
		"DOCA_GPUNETIO_IB_MLX5_CQE_REQ_ERR":                                 int64(mlx5.CQEReqErr),
		"DOCA_GPUNETIO_IB_MLX5_CQE_RESP_ERR":                                int64(mlx5.CQERespErr),
		"DOCA_GPUNETIO_IB_MLX5_CQE_INVALID":                                 int64(mlx5.CQEInvalid),
		"DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_VALID_DBR":                   int64(gpunetio.SendDBRValid),
		"DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_NO_DBR_HW":                   int64(gpunetio.SendNoDBRHW),
		"DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_NO_DBR_SW_EMULATED":          int64(gpunetio.SendNoDBRSWEmulated),
		"DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD":                             int64(gpunetio.ExecScopeThread),
		"DOCA_GPUNETIO_VERBS_EXEC_SCOPE_WARP":                               int64(gpunetio.ExecScopeWarp),
		"DOCA_GPUNETIO_VERBS_SYNC_SCOPE_SYS":                                int64(gpunetio.SyncScopeSys),
		"DOCA_GPUNETIO_VERBS_SYNC_SCOPE_GPU":                                int64(gpunetio.SyncScopeGPU),
		"DOCA_GPUNETIO_VERBS_SYNC_SCOPE_CTA":                                int64(gpunetio.SyncScopeCTA),
		"DOCA_GPUNETIO_VERBS_SYNC_SCOPE_THREAD":                             int64(gpunetio.SyncScopeThread),
		"DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_EXCLUSIVE":               int64(gpunetio.SharingExclusive),
		"DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_CTA":                     int64(gpunetio.SharingCTA),
		"DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU":                     int64(gpunetio.SharingGPU),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_CPU_PROXY":                    int64(gpunetio.NICFlagCPUProxy),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_GPU_SM":                       int64(gpunetio.NICFlagGPUSM),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_BF":                           int64(gpunetio.NICFlagBF),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_FLAG_NO_DBR":                       int64(gpunetio.NICFlagNoDBR),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_AUTO":                              int64(gpunetio.NICHandlerAuto),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY":                         int64(gpunetio.NICHandlerCPUProxy),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB":                         int64(gpunetio.NICHandlerGPUSMDB),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_BF":                         int64(gpunetio.NICHandlerGPUSMBF),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_NO_DBR":                     int64(gpunetio.NICHandlerGPUSMNoDBR),
		"DOCA_GPUNETIO_VERBS_NIC_HANDLER_CPU_PROXY_NO_DBR":                  int64(gpunetio.NICHandlerCPUProxyNoDBR),
		"DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_DEFAULT":                          int64(gpunetio.CodeOptDefault),
		"DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_ASYNC_STORE_RELEASE":              int64(gpunetio.CodeOptAsyncStoreRelease),
		"DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_AVAILABILITY_CHECK":          int64(gpunetio.CodeOptSkipAvailabilityCheck),
		"DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_SKIP_DB_RINGING":                  int64(gpunetio.CodeOptSkipDBRinging),
		"DOCA_GPUNETIO_VERBS_GPU_CODE_OPT_CPU_PROXY_UPDATE_PI":              int64(gpunetio.CodeOptCPUProxyUpdatePI),
		"DOCA_SUCCESS":                     0,
		"DOCA_ERROR_UNKNOWN":               int64(verbs.ErrUnknown),
		"DOCA_ERROR_NOT_PERMITTED":         int64(verbs.ErrNotPermitted),
		"DOCA_ERROR_IN_USE":                int64(verbs.ErrInUse),
		"DOCA_ERROR_NOT_SUPPORTED":         int64(verbs.ErrNotSupported),
		"DOCA_ERROR_AGAIN":                 int64(verbs.ErrAgain),
		"DOCA_ERROR_INVALID_VALUE":         int64(verbs.ErrInvalidValue),
		"DOCA_ERROR_NO_MEMORY":             int64(verbs.ErrNoMemory),
		"DOCA_ERROR_INITIALIZATION":        int64(verbs.ErrInitialization),
		"DOCA_ERROR_TIME_OUT":              int64(verbs.ErrTimeOut),
		"DOCA_ERROR_SHUTDOWN":              int64(verbs.ErrShutdown),
		"DOCA_ERROR_CONNECTION_RESET":      int64(verbs.ErrConnectionReset),
		"DOCA_ERROR_CONNECTION_ABORTED":    int64(verbs.ErrConnectionAborted),
		"DOCA_ERROR_CONNECTION_INPROGRESS": int64(verbs.ErrConnectionInProgress),
		"DOCA_ERROR_NOT_CONNECTED":         int64(verbs.ErrNotConnected),
		"DOCA_ERROR_NO_LOCK":               int64(verbs.ErrNoLock),
		"DOCA_ERROR_NOT_FOUND":             int64(verbs.ErrNotFound),
		"DOCA_ERROR_IO_FAILED":             int64(verbs.ErrIOFailed),
		"DOCA_ERROR_BAD_STATE":             int64(verbs.ErrBadState),
		"DOCA_ERROR_UNSUPPORTED_VERSION":   int64(verbs.ErrUnsupportedVersion),
		"DOCA_ERROR_OPERATING_SYSTEM":      int64(verbs.ErrOperatingSystem),
		"DOCA_ERROR_DRIVER":                int64(verbs.ErrDriver),
		"DOCA_ERROR_UNEXPECTED":            int64(verbs.ErrUnexpected),
		"DOCA_ERROR_ALREADY_EXIST":         int64(verbs.ErrAlreadyExist),
		"DOCA_ERROR_FULL":                  int64(verbs.ErrFull),
		"DOCA_ERROR_EMPTY":                 int64(verbs.ErrEmpty),
		"DOCA_ERROR_IN_PROGRESS":           int64(verbs.ErrInProgress),
		"DOCA_ERROR_TOO_BIG":               int64(verbs.ErrTooBig),
		"DOCA_ERROR_AUTHENTICATION":        int64(verbs.ErrAuthentication),
		"DOCA_ERROR_BAD_CONFIG":            int64(verbs.ErrBadConfig),
		"DOCA_ERROR_SKIPPED":               int64(verbs.ErrSkipped),
		"DOCA_ERROR_DEVICE_FATAL_ERROR":    int64(verbs.ErrDeviceFatal),
	}
}

// Every retyped value equals the header's, and the C table and the Go map
// list the same constants.
func TestConstantsMatchHeader(t *testing.T) {
	want := goValues()
	seen := map[string]bool{}
	for _, c := range hdrcheck.Consts() {
		seen[c.Name] = true
		v, ok := want[c.Name]
		if !ok {
			t.Errorf("%s (= %#x in the header) is in the C table but no Go definition is checked against it", c.Name, c.Value)
			continue
		}
		if v != c.Value {
			t.Errorf("%s: the header says %#x, the Go definition %#x", c.Name, c.Value, v)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s is checked here but missing from the C table (consts.go)", name)
		}
	}
}

// The names the Go types print are the header's enumerator names (after
// their common prefix), so a value and its name cannot drift apart.
func TestNamesMatchHeader(t *testing.T) {
	n := 0
	for _, c := range hdrcheck.Consts() {
		var got, want string
		switch {
		case strings.HasPrefix(c.Name, "DOCA_ERROR_"), c.Name == "DOCA_SUCCESS":
			got, want = verbs.Code(c.Value).Name(), c.Name
		case strings.HasPrefix(c.Name, "DOCA_GPUNETIO_VERBS_NIC_HANDLER_") && !strings.Contains(c.Name, "_FLAG_"):
			got, want = gpunetio.NICHandler(c.Value).String(), strings.TrimPrefix(c.Name, "DOCA_GPUNETIO_VERBS_NIC_HANDLER_")
		case strings.HasPrefix(c.Name, "DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_"):
			got, want = gpunetio.SendDBRModeExt(c.Value).String(), strings.TrimPrefix(c.Name, "DOCA_GPUNETIO_VERBS_SEND_DBR_MODE_EXT_")
		case strings.HasPrefix(c.Name, "DOCA_GPUNETIO_IB_MLX5_OPCODE_"):
			got, want = mlx5.WQEOpcode(c.Value).String(), strings.TrimPrefix(c.Name, "DOCA_GPUNETIO_IB_MLX5_OPCODE_")
		case strings.HasPrefix(c.Name, "DOCA_GPUNETIO_IB_MLX5_CQE_") && c.Name != "DOCA_GPUNETIO_IB_MLX5_CQE_OWNER_MASK":
			got, want = mlx5.CQEOpcode(c.Value).String(), strings.TrimPrefix(c.Name, "DOCA_GPUNETIO_IB_MLX5_CQE_")
		default:
			continue
		}
		n++
		if got != want {
			t.Errorf("%s = %d: Go names it %q", c.Name, c.Value, got)
		}
	}
	if n < 60 {
		t.Errorf("only %d names compared: the prefixes above no longer match the table", n)
	}
}

// field returns the header's layout of struct member name (devstruct's
// table, from the C compiler).
func field(t *testing.T, name string) devstruct.Field {
	t.Helper()
	f, ok := devstruct.LayoutOf(name)
	if !ok {
		t.Fatalf("%s is not in devstruct's layout table", name)
	}
	return f
}

// beAt reads the big-endian value of the header field name from b.
func beAt(t *testing.T, b []byte, name string) uint64 {
	t.Helper()
	f := field(t, name)
	if int(f.Offset+f.Size) > len(b) || f.Size > 8 {
		t.Fatalf("%s (offset %d, size %d) does not fit %d bytes", name, f.Offset, f.Size, len(b))
	}
	var v uint64
	for _, x := range b[f.Offset : f.Offset+f.Size] {
		v = v<<8 | uint64(x)
	}
	return v
}

type fieldCheck struct {
	name string // header struct.field
	want uint64
}

func checkFields(t *testing.T, what string, b []byte, cs []fieldCheck) {
	t.Helper()
	for _, c := range cs {
		if got := beAt(t, b, c.name); got != c.want {
			t.Errorf("%s: header field %s holds %#x, mlx5 stored %#x there", what, c.name, got, c.want)
		}
	}
}

// mlx5's segment encoders put every operand where the header's segment
// structs have it (all fields big-endian, as the NIC reads them).
func TestSegmentLayoutsMatchHeader(t *testing.T) {
	seg := func(put func([]byte)) []byte {
		b := make([]byte, mlx5.DSSize)
		put(b)
		return b
	}
	for _, s := range []string{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg", "doca_gpunetio_ib_mlx5_wqe_data_seg",
		"doca_gpunetio_ib_mlx5_wqe_raddr_seg", "doca_gpunetio_ib_mlx5_wqe_atomic_seg",
		"doca_gpunetio_ib_mlx5_wqe_wait_seg"} {
		if f := field(t, s); f.Size != mlx5.DSSize {
			t.Errorf("sizeof %s is %d, mlx5.DSSize %d", s, f.Size, mlx5.DSSize)
		}
	}
	if f := field(t, "doca_gpu_dev_verbs_wqe"); f.Size != mlx5.WQEBB {
		t.Errorf("sizeof doca_gpu_dev_verbs_wqe is %d, mlx5.WQEBB %d", f.Size, mlx5.WQEBB)
	}

	c := mlx5.CtrlSeg{OpMod: 0x09, WQEIndex: 0xbeef, Opcode: mlx5.WQEOpAtomicMaskedCS, QPN: 0x1a2b3c, DS: 0x25,
		Signature: 0x5a, DCIStream: 0x1234, Flags: mlx5.CtrlCQUpdateFence, Imm: 0xcafef00d}
	checkFields(t, "CtrlSeg", seg(c.Put), []fieldCheck{
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.opmod_idx_opcode", 0x09<<24 | 0xbeef<<8 | uint64(mlx5.WQEOpAtomicMaskedCS)},
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.qpn_ds", 0x1a2b3c<<8 | 0x25},
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.signature", 0x5a},
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.dci_stream_channel_id", 0x1234},
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.fm_ce_se", uint64(mlx5.CtrlCQUpdateFence)},
		{"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.imm", 0xcafef00d},
	})
	d := mlx5.DataSeg{ByteCount: 0x1234567, LKey: 0x89abcdef, Addr: 0x0102030405060708}
	checkFields(t, "DataSeg", seg(d.Put), []fieldCheck{
		{"doca_gpunetio_ib_mlx5_wqe_data_seg.byte_count", 0x1234567},
		{"doca_gpunetio_ib_mlx5_wqe_data_seg.lkey", 0x89abcdef},
		{"doca_gpunetio_ib_mlx5_wqe_data_seg.addr", 0x0102030405060708},
	})
	r := mlx5.RAddrSeg{Addr: 0x1112131415161718, RKey: 0x21222324}
	checkFields(t, "RAddrSeg", seg(r.Put), []fieldCheck{
		{"doca_gpunetio_ib_mlx5_wqe_raddr_seg.raddr", 0x1112131415161718},
		{"doca_gpunetio_ib_mlx5_wqe_raddr_seg.rkey", 0x21222324},
		{"doca_gpunetio_ib_mlx5_wqe_raddr_seg.reserved", 0},
	})
	a := mlx5.AtomicSeg{SwapAdd: 0x3132333435363738, Compare: 0x4142434445464748}
	checkFields(t, "AtomicSeg", seg(a.Put), []fieldCheck{
		{"doca_gpunetio_ib_mlx5_wqe_atomic_seg.swap_add", 0x3132333435363738},
		{"doca_gpunetio_ib_mlx5_wqe_atomic_seg.compare", 0x4142434445464748},
	})
	w := mlx5.WaitSeg{MaxIndex: 0x00abcdef, QPNCQN: 0x00123456}
	checkFields(t, "WaitSeg", seg(w.Put), []fieldCheck{
		{"doca_gpunetio_ib_mlx5_wqe_wait_seg.resv", 0},
		{"doca_gpunetio_ib_mlx5_wqe_wait_seg.max_index", 0x00abcdef},
		{"doca_gpunetio_ib_mlx5_wqe_wait_seg.qpn_cqn", 0x00123456},
	})

	cs := mlx5.MaskedCSSeg{Swap: 0x1111111122222222, Compare: 0x3333333344444444,
		SwapMask: 0x5555555566666666, CompareMask: 0x7777777788888888}
	checkFields(t, "MaskedCSSeg.Put4", seg(cs.Put4), []fieldCheck{
		{"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.swap_data", 0x22222222},
		{"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.compare_data", 0x44444444},
		{"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.swap_mask", 0x66666666},
		{"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.compare_mask", 0x88888888},
	})
	b0, b1 := make([]byte, mlx5.DSSize), make([]byte, mlx5.DSSize)
	cs.Put8(b0, b1)
	checkFields(t, "MaskedCSSeg.Put8 (first segment)", b0, []fieldCheck{
		{"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.swap", cs.Swap},
		{"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.compare", cs.Compare},
	})
	checkFields(t, "MaskedCSSeg.Put8 (second segment)", b1, []fieldCheck{
		{"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.swap", cs.SwapMask},
		{"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.compare", cs.CompareMask},
	})
	fa := mlx5.MaskedFASeg{Add: 0x0a0b0c0d01020304, FieldBoundary: 0x8000000080000000}
	checkFields(t, "MaskedFASeg.Put4", seg(fa.Put4), []fieldCheck{
		{"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.add_data", 0x01020304},
		{"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.field_boundary", 0x80000000},
		{"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.reserved", 0},
	})
	checkFields(t, "MaskedFASeg.Put8", seg(fa.Put8), []fieldCheck{
		{"doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t.add_data", fa.Add},
		{"doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t.field_boundary", fa.FieldBoundary},
	})
	if h := mlx5.InlineHeader(0x1c); binary.BigEndian.Uint32(h[:]) != 0x8000001c ||
		field(t, "doca_gpunetio_ib_mlx5_wqe_inl_data_seg").Size != uintptr(len(h)) {
		t.Errorf("inline header %x does not match the header's 4-byte segment", h)
	}
}

// mlx5's CQE codec reads and writes every field where the header's CQE
// structs (normal and error view) have it.
func TestCQELayoutMatchesHeader(t *testing.T) {
	if f := field(t, "doca_gpunetio_ib_mlx5_cqe64"); f.Size != mlx5.CQESize {
		t.Fatalf("sizeof cqe64 is %d, mlx5.CQESize %d", f.Size, mlx5.CQESize)
	}
	c := mlx5.CQE{WQEID: 0x0102, MLPath: 0x03, SLID: 0x0405, FlagsRQPN: 0x06070809, HdsIPExt: 0x0a,
		L4HdrTypeEtc: 0x0b, VLANInfo: 0x0c0d, SRQNUIdx: 0x0e0f1011, ImmInvalPKey: 0x12131415, App: 0x16,
		AppOp: 0x17, AppInfo: 0x1819, ByteCnt: 0x1a1b1c1d, Timestamp: 0x1e1f202122232425,
		WQEOpcode: mlx5.WQEOpRDMAWrite, QPN: 0x262728, WQECounter: 0x292a, Signature: 0x2b,
		Opcode: mlx5.CQEReq, Format: 0, Solicited: true, Owner: 1}
	b := make([]byte, mlx5.CQESize)
	if err := c.Encode(b); err != nil {
		t.Fatal(err)
	}
	const p = "doca_gpunetio_ib_mlx5_cqe64."
	checkFields(t, "CQE", b, []fieldCheck{
		{p + "wqe_id", 0x0102}, {p + "ml_path", 0x03}, {p + "slid", 0x0405}, {p + "flags_rqpn", 0x06070809},
		{p + "hds_ip_ext", 0x0a}, {p + "l4_hdr_type_etc", 0x0b}, {p + "vlan_info", 0x0c0d},
		{p + "srqn_uidx", 0x0e0f1011}, {p + "imm_inval_pkey", 0x12131415}, {p + "app", 0x16}, {p + "app_op", 0x17},
		{p + "app_info", 0x1819}, {p + "byte_cnt", 0x1a1b1c1d}, {p + "timestamp", 0x1e1f202122232425},
		{p + "sop_drop_qpn", uint64(mlx5.WQEOpRDMAWrite)<<24 | 0x262728}, {p + "wqe_counter", 0x292a},
		{p + "signature", 0x2b}, {p + "op_own", uint64(mlx5.CQEReq)<<4 | 1<<1 | 1},
	})

	e := mlx5.CQE{SRQNUIdx: 0x00313233, HWErrSynd: 0x41, HWSyndType: 0x42, VendorSyndrome: 0x43,
		Syndrome: mlx5.SyndromeRemoteAccessErr, WQEOpcode: mlx5.WQEOpRDMARead, QPN: 0x515253, WQECounter: 0x6162,
		Signature: 0x71, Opcode: mlx5.CQEReqErr}
	if err := e.Encode(b); err != nil {
		t.Fatal(err)
	}
	const q = "doca_gpunetio_ib_mlx5_err_cqe_ex."
	checkFields(t, "error CQE", b, []fieldCheck{
		{q + "srqn", 0x00313233}, {q + "hw_err_synd", 0x41}, {q + "hw_synd_type", 0x42},
		{q + "vendor_err_synd", 0x43}, {q + "syndrome", uint64(mlx5.SyndromeRemoteAccessErr)},
		{q + "s_wqe_opcode_qpn", uint64(mlx5.WQEOpRDMARead)<<24 | 0x515253}, {q + "wqe_counter", 0x6162},
		{q + "signature", 0x71}, {q + "op_own", uint64(mlx5.CQEReqErr) << 4},
	})
	back, err := mlx5.DecodeCQE(b)
	if err != nil || back.Syndrome != mlx5.SyndromeRemoteAccessErr || back.VendorSyndrome != 0x43 {
		t.Errorf("decode of the error CQE: %+v, %v", back, err)
	}
}
