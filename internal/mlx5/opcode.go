package mlx5

import "fmt"

// Opcode is a PRM command opcode.
type Opcode = uint16

const (
	OpQueryHCACap          Opcode = 0x100
	OpCreateCQ             Opcode = 0x400
	OpDestroyCQ            Opcode = 0x401
	OpQueryCQ              Opcode = 0x402
	OpModifyCQ             Opcode = 0x403
	OpCreateQP             Opcode = 0x500
	OpDestroyQP            Opcode = 0x501
	OpRST2INIT             Opcode = 0x502
	OpINIT2RTR             Opcode = 0x503
	OpRTR2RTS              Opcode = 0x504
	OpRTS2RTS              Opcode = 0x505
	OpSQERR2RTS            Opcode = 0x506
	Op2ERR                 Opcode = 0x507
	Op2RST                 Opcode = 0x50a
	OpQueryQP              Opcode = 0x50b
	OpINIT2INIT            Opcode = 0x50e
	OpCreateRMP            Opcode = 0x90c
	OpModifyRMP            Opcode = 0x90d
	OpDestroyRMP           Opcode = 0x90e
	OpQueryRMP             Opcode = 0x90f
	OpQueryNICVportContext Opcode = 0x754
	OpQueryRoCEAddress     Opcode = 0x760
	OpQueryHCAVportContext Opcode = 0x762
	OpAllocPD              Opcode = 0x800
	OpNOP                  Opcode = 0x80d
	OpCreateUMEM           Opcode = 0xa08
)

var opcodeNames = map[Opcode]string{
	OpQueryHCACap:          "QUERY_HCA_CAP",
	OpCreateCQ:             "CREATE_CQ",
	OpDestroyCQ:            "DESTROY_CQ",
	OpQueryCQ:              "QUERY_CQ",
	OpModifyCQ:             "MODIFY_CQ",
	OpCreateQP:             "CREATE_QP",
	OpDestroyQP:            "DESTROY_QP",
	OpRST2INIT:             "RST2INIT_QP",
	OpINIT2RTR:             "INIT2RTR_QP",
	OpRTR2RTS:              "RTR2RTS_QP",
	OpRTS2RTS:              "RTS2RTS_QP",
	OpSQERR2RTS:            "SQERR2RTS_QP",
	Op2ERR:                 "2ERR_QP",
	Op2RST:                 "2RST_QP",
	OpQueryQP:              "QUERY_QP",
	OpINIT2INIT:            "INIT2INIT_QP",
	OpCreateRMP:            "CREATE_RMP",
	OpModifyRMP:            "MODIFY_RMP",
	OpDestroyRMP:           "DESTROY_RMP",
	OpQueryRMP:             "QUERY_RMP",
	OpQueryNICVportContext: "QUERY_NIC_VPORT_CONTEXT",
	OpQueryRoCEAddress:     "QUERY_ROCE_ADDRESS",
	OpQueryHCAVportContext: "QUERY_HCA_VPORT_CONTEXT",
	OpAllocPD:              "ALLOC_PD",
	OpNOP:                  "NOP",
	OpCreateUMEM:           "CREATE_UMEM",
}

// OpcodeName names a PRM command opcode, "OPCODE_0x..." when unknown.
func OpcodeName(op Opcode) string {
	if n, ok := opcodeNames[op]; ok {
		return n
	}
	return fmt.Sprintf("OPCODE_0x%03x", op)
}
