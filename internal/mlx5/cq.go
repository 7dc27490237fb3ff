package mlx5

// The CQ context (cqc) and the CQ commands CREATE_CQ, QUERY_CQ and
// DESTROY_CQ. The cqc, CREATE_CQ in, QUERY_CQ out and the sizes are
// generated from prm/cq.prm (cq_gen.go). DESTROY_CQ and QUERY_CQ inputs are ObjCmdIn
// (misc_cmd.go); CREATE_CQ's output is CreateOut.

const cqcMailboxByte = CQCMailboxBit / 8

// CQE size codes of cqc.cqe_sz.
const (
	CQESize64  = 0
	CQESize128 = 1
)
