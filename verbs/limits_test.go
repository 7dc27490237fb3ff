package verbs

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A LIM_ERR refusal of a creating command names the resource that ran
// out and the capability that bounds it; other refusals are unchanged.
func TestFirmwareLimitNamed(t *testing.T) {
	for cmd, want := range map[string]string{
		"CREATE_CQ":  "every CQ in use: the device allows 2^log_max_cq",
		"CREATE_QP":  "every QP in use: the device allows 2^log_max_qp",
		"CREATE_RMP": "every RMP (SRQ) in use: the device allows 2^log_max_srq",
	} {
		e := &FirmwareError{Call: "devx_obj_create", Command: cmd, Status: FirmwareStatusLimErr, Syndrome: 0x0e000051, Errno: syscall.EREMOTEIO}
		assert.Equal(t, "devx_obj_create "+cmd+" (op_mod 0x0): firmware status LIM_ERR (0x08), syndrome 0x0e000051 ("+want+")", e.Error())
	}
	e := &FirmwareError{Call: "devx_obj_create", Command: "CREATE_CQ", Status: FirmwareStatusBadParam, Syndrome: 1, Errno: syscall.EREMOTEIO}
	assert.NotContains(t, e.Error(), "in use")
}
