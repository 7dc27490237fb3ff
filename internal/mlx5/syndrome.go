package mlx5

import "fmt"

// Syndrome is the completion error syndrome in byte 55 of an error CQE. It is also what the WQE parser reports for a
// malformed WQE, so the emulator can put it into the error CQE unchanged.
//
// Syndrome implements error, so errors.Is(err, SyndromeLocalQPOpErr) matches
// any error (a *WQEError, a *CQEError) that carries that syndrome.
type Syndrome uint8

const (
	SyndromeLocalLengthErr       Syndrome = 0x01 // IBV_WC_LOC_LEN_ERR
	SyndromeLocalQPOpErr         Syndrome = 0x02 // IBV_WC_LOC_QP_OP_ERR
	SyndromeLocalProtErr         Syndrome = 0x04 // IBV_WC_LOC_PROT_ERR
	SyndromeWRFlushErr           Syndrome = 0x05 // IBV_WC_WR_FLUSH_ERR
	SyndromeMWBindErr            Syndrome = 0x06 // IBV_WC_MW_BIND_ERR
	SyndromeBadRespErr           Syndrome = 0x10 // IBV_WC_BAD_RESP_ERR
	SyndromeLocalAccessErr       Syndrome = 0x11 // IBV_WC_LOC_ACCESS_ERR
	SyndromeRemoteInvalReqErr    Syndrome = 0x12 // IBV_WC_REM_INV_REQ_ERR
	SyndromeRemoteAccessErr      Syndrome = 0x13 // IBV_WC_REM_ACCESS_ERR
	SyndromeRemoteOpErr          Syndrome = 0x14 // IBV_WC_REM_OP_ERR
	SyndromeTransportRetryExcErr Syndrome = 0x15 // IBV_WC_RETRY_EXC_ERR
	SyndromeRNRRetryExcErr       Syndrome = 0x16 // IBV_WC_RNR_RETRY_EXC_ERR
	SyndromeRemoteAbortedErr     Syndrome = 0x22 // IBV_WC_REM_ABORT_ERR
)

// VendorSyndromeODPPageFault is vendor_err_synd 0x93
// (MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT), the one vendor syndrome the fact
// sheet names.
const VendorSyndromeODPPageFault uint8 = 0x93

var syndromeInfo = map[Syndrome]struct{ name, wc string }{
	SyndromeLocalLengthErr:       {"LOCAL_LENGTH_ERR", "IBV_WC_LOC_LEN_ERR"},
	SyndromeLocalQPOpErr:         {"LOCAL_QP_OP_ERR", "IBV_WC_LOC_QP_OP_ERR"},
	SyndromeLocalProtErr:         {"LOCAL_PROT_ERR", "IBV_WC_LOC_PROT_ERR"},
	SyndromeWRFlushErr:           {"WR_FLUSH_ERR", "IBV_WC_WR_FLUSH_ERR"},
	SyndromeMWBindErr:            {"MW_BIND_ERR", "IBV_WC_MW_BIND_ERR"},
	SyndromeBadRespErr:           {"BAD_RESP_ERR", "IBV_WC_BAD_RESP_ERR"},
	SyndromeLocalAccessErr:       {"LOCAL_ACCESS_ERR", "IBV_WC_LOC_ACCESS_ERR"},
	SyndromeRemoteInvalReqErr:    {"REMOTE_INVAL_REQ_ERR", "IBV_WC_REM_INV_REQ_ERR"},
	SyndromeRemoteAccessErr:      {"REMOTE_ACCESS_ERR", "IBV_WC_REM_ACCESS_ERR"},
	SyndromeRemoteOpErr:          {"REMOTE_OP_ERR", "IBV_WC_REM_OP_ERR"},
	SyndromeTransportRetryExcErr: {"TRANSPORT_RETRY_EXC_ERR", "IBV_WC_RETRY_EXC_ERR"},
	SyndromeRNRRetryExcErr:       {"RNR_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR"},
	SyndromeRemoteAbortedErr:     {"REMOTE_ABORTED_ERR", "IBV_WC_REM_ABORT_ERR"},
}

// String returns the PRM name (LOCAL_QP_OP_ERR, ...), or SYNDROME_0xNN for a
// value the PRM does not name.
func (s Syndrome) String() string {
	if i, ok := syndromeInfo[s]; ok {
		return i.name
	}
	return fmt.Sprintf("SYNDROME_0x%02x", uint8(s))
}

// WCStatus returns the name of the ibv_wc_status rdma-core maps the syndrome
// to; every syndrome the table does not list maps to IBV_WC_GENERAL_ERR.
func (s Syndrome) WCStatus() string {
	if i, ok := syndromeInfo[s]; ok {
		return i.wc
	}
	return "IBV_WC_GENERAL_ERR"
}

// Known reports whether the syndrome is one of the documented values.
func (s Syndrome) Known() bool {
	_, ok := syndromeInfo[s]
	return ok
}

// Error makes a Syndrome usable as an errors.Is target.
func (s Syndrome) Error() string {
	return fmt.Sprintf("completion syndrome %s (0x%02x, %s)", s.String(), uint8(s), s.WCStatus())
}

// CQEError is an error completion read from a CQ: a CQE whose opcode is
// REQ_ERR or RESP_ERR. It unwraps to its Syndrome.
type CQEError struct {
	Opcode         CQEOpcode // CQEReqErr or CQERespErr
	Syndrome       Syndrome
	VendorSyndrome uint8
	WQEOpcode      WQEOpcode // opcode of the failed send WQE (requester errors)
	QPN            uint32
	WQECounter     uint16 // SQ (requester) or RQ (responder) index of the failed WQE
}

func (e *CQEError) Error() string {
	return fmt.Sprintf("%s completion on QP 0x%x for WQE %d (%s): syndrome %s (0x%02x, %s), vendor syndrome 0x%02x",
		e.Opcode, e.QPN, e.WQECounter, e.WQEOpcode, e.Syndrome.String(), uint8(e.Syndrome), e.Syndrome.WCStatus(), e.VendorSyndrome)
}

// Unwrap returns the syndrome, so errors.Is(err, SyndromeWRFlushErr) works.
func (e *CQEError) Unwrap() error { return e.Syndrome }
