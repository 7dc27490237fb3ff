package mlx5

// The CQ context (cqc) and the CQ commands CREATE_CQ, QUERY_CQ and
// DESTROY_CQ. The cqc, CREATE_CQ in and the sizes are generated from
// prm/cq.prm (cq_gen.go). DESTROY_CQ and QUERY_CQ inputs are ObjCmdIn
// (misc_cmd.go); CREATE_CQ's output is CreateOut.

const cqcMailboxByte = CQCMailboxBit / 8

// CQE size codes of cqc.cqe_sz.
const (
	CQESize64  = 0
	CQESize128 = 1
)

// QueryCQOut is the 272-byte QUERY_CQ (0x402) output: the live cqc.
type QueryCQOut struct {
	OutHeader
	CQC CQContext
}

// Marshal builds the 272-byte output mailbox.
func (o QueryCQOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryCQOutLen)
	_ = o.OutHeader.Encode(b)
	if err := o.CQC.Encode(b[cqcMailboxByte:]); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryCQOut parses a QUERY_CQ output.
func UnmarshalQueryCQOut(b []byte) (QueryCQOut, error) {
	var o QueryCQOut
	h, err := unmarshalOut("QUERY_CQ out", b, QueryCQOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	o.CQC, err = DecodeCQContext(b[cqcMailboxByte:])
	return o, err
}
