package mlx5

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSyndromeNames(t *testing.T) {
	cases := []struct {
		s        Syndrome
		name, wc string
	}{
		{0x01, "LOCAL_LENGTH_ERR", "IBV_WC_LOC_LEN_ERR"},
		{0x02, "LOCAL_QP_OP_ERR", "IBV_WC_LOC_QP_OP_ERR"},
		{0x04, "LOCAL_PROT_ERR", "IBV_WC_LOC_PROT_ERR"},
		{0x05, "WR_FLUSH_ERR", "IBV_WC_WR_FLUSH_ERR"},
		{0x06, "MW_BIND_ERR", "IBV_WC_MW_BIND_ERR"},
		{0x10, "BAD_RESP_ERR", "IBV_WC_BAD_RESP_ERR"},
		{0x11, "LOCAL_ACCESS_ERR", "IBV_WC_LOC_ACCESS_ERR"},
		{0x12, "REMOTE_INVAL_REQ_ERR", "IBV_WC_REM_INV_REQ_ERR"},
		{0x13, "REMOTE_ACCESS_ERR", "IBV_WC_REM_ACCESS_ERR"},
		{0x14, "REMOTE_OP_ERR", "IBV_WC_REM_OP_ERR"},
		{0x15, "TRANSPORT_RETRY_EXC_ERR", "IBV_WC_RETRY_EXC_ERR"},
		{0x16, "RNR_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR"},
		{0x22, "REMOTE_ABORTED_ERR", "IBV_WC_REM_ABORT_ERR"},
	}
	known := map[Syndrome]bool{}
	for _, c := range cases {
		known[c.s] = true
		assert.Equal(t, c.name, c.s.String())
		assert.Equal(t, c.wc, c.s.WCStatus())
		assert.True(t, c.s.Known())
		assert.Equal(t, fmt.Sprintf("completion syndrome %s (0x%02x, %s)", c.name, uint8(c.s), c.wc), c.s.Error())
	}
	for v := 0; v < 256; v++ {
		s := Syndrome(v)
		if known[s] {
			continue
		}
		assert.False(t, s.Known())
		assert.Equal(t, fmt.Sprintf("SYNDROME_0x%02x", v), s.String())
		assert.Equal(t, "IBV_WC_GENERAL_ERR", s.WCStatus())
	}
	assert.Equal(t, uint8(0x93), VendorSyndromeODPPageFault)
}

func TestSyndromeErrorsIs(t *testing.T) {
	we := wqeErr("parse WQE", 4, WQEOpSend, SyndromeLocalLengthErr, "data segment at unit %d has byte_count 0", 1)
	var err error = fmt.Errorf("emulator: %w", we)
	assert.ErrorIs(t, err, SyndromeLocalLengthErr)
	assert.NotErrorIs(t, err, SyndromeLocalQPOpErr)
	var got *WQEError
	assert.True(t, errors.As(err, &got))
	assert.Equal(t, "parse WQE at index 4 (SEND): data segment at unit 1 has byte_count 0: syndrome LOCAL_LENGTH_ERR (0x01)",
		we.Error())

	ce := &CQEError{Opcode: CQEReqErr, Syndrome: SyndromeWRFlushErr, QPN: 9, WQECounter: 3, WQEOpcode: WQEOpNop}
	assert.ErrorIs(t, ce, SyndromeWRFlushErr)
	assert.Equal(t, "REQ_ERR completion on QP 0x9 for WQE 3 (NOP): syndrome WR_FLUSH_ERR (0x05, IBV_WC_WR_FLUSH_ERR), vendor syndrome 0x00",
		ce.Error())
}
