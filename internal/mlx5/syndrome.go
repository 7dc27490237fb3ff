package mlx5

// Syndrome, its names, Known and WCStatus are generated from
// prm/syndrome.prm (syndrome_gen.go).

import "fmt"

// VendorSyndromeODPPageFault is vendor_err_synd 0x93
// (MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT), the one vendor syndrome this
// package names.
const VendorSyndromeODPPageFault uint8 = 0x93

// The vendor syndromes the emulated device writes in the vendor_err_synd
// byte of its LOC_PROT_ERR and REM_ACCESS_ERR completions, naming the
// check that failed (a ConnectX's vendor syndromes are opaque and
// undocumented; these are the emulator's own, and mean nothing on
// hardware). For REM_ACCESS_ERR the check is the responder's, which the
// emulated wire carries back to the requester.
const (
	VendorSynEmuKey      uint8 = 0xe1 // the lkey or rkey names no valid memory region (wrong key, or a region deregistered or invalidated)
	VendorSynEmuPD       uint8 = 0xe2 // the region belongs to another PD than the QP's
	VendorSynEmuBounds   uint8 = 0xe3 // the address range lies outside the region
	VendorSynEmuRight    uint8 = 0xe4 // the region lacks the access right the operation needs (remote write, read or atomic; local write)
	VendorSynEmuQPAccess uint8 = 0xe5 // the responder QP does not allow the operation (remote write, read or atomics not enabled at its RST -> INIT)
)

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
