package gpurun

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// TestDescribeQP: the indices of both queues, the doorbell-record words and
// the CQE each consumer index points at, read through the reader at the
// addresses the image names; a failed read is named, not fatal.
func TestDescribeQP(t *testing.T) {
	q := devstruct.QP{
		SQRsvdIndex: 40, SQReadyIndex: 38, SQWQEPI: 38, SQWQENum: 64, SQDBRec: 0x1004,
		RQRsvdIndex: 512, RQReadyIndex: 512, RQWQEPI: 512, RQWQENum: 512, RQDBRec: 0x1000, RQLock: 1,
		CQ:   devstruct.CQ{CQEDAddr: 0x10000, CQENum: 64, CQECI: 65},
		CQRQ: devstruct.CQ{CQEDAddr: 0x20000, CQENum: 512, CQECI: 3},
	}
	mem := map[uint64][]byte{
		0x1000:         binary.BigEndian.AppendUint32(nil, 512),
		0x10000 + 1*64: append(make([]byte, 63), 0x01), // slot 1, second lap: opcode 0 owner 1
		0x20000 + 3*64: append(make([]byte, 63), 0xf0), // invalid, owner 0
	}
	read := func(b []byte, addr uint64) error {
		v, ok := mem[addr]
		if !ok {
			return errors.New("no such address")
		}
		copy(b, v)
		return nil
	}
	s, err := describeQP(q.Encode(), read)
	require.NoError(t, err)
	assert.Equal(t, "SQ: reserved 40 ready 38 doorbell PI 38 of 64 WQEs, lock 0, DBR unreadable (no such address); "+
		"send CQ: consumer index 65 of 64, CQE at it: opcode 0 owner 1 (this lap's CQE has owner 1)\n"+
		"RQ: reserved 512 ready 512 record PI 512 of 512 WQEs, lock 1, DBR 512; "+
		"receive CQ: consumer index 3 of 512, CQE at it: opcode 15 owner 0 (this lap's CQE has owner 0)", s)

	q.Error = devstruct.QPError{Status: devstruct.QPErrCQE, CQEOpcode: 13, Syndrome: 0x16, WQEIndex: 7}
	q.RQWQENum = 0
	s, err = describeQP(q.Encode(), read)
	require.NoError(t, err)
	assert.NotContains(t, s, "RQ:")
	assert.Contains(t, s, "error record: status 1, CQE opcode 13 syndrome 0x16 vendor 0x0, WQE index 7")

	_, err = describeQP(make([]byte, 8), read)
	assert.ErrorContains(t, err, "QP state")
}
