package mlx5

// SRQs through CREATE_RMP (0x90c): the RMP context (rmpc) with its embedded
// WQ context, CREATE_RMP in/out and QUERY_RMP out.
// DESTROY_RMP and QUERY_RMP inputs are ObjCmdIn (misc_cmd.go).
//
// Field sources: the fields DOCA Verbs programs; wq.lwm, uar_page,
// hw_counter, sw_counter and log_wq_pg_sz come from the kernel's
// mlx5_ifc.h wq layout (not in the project reference) so that QUERY_RMP can
// report the counters.

// Sizes and positions of the RMP layouts.
const (
	WQCLen          = 192 // wq context, without its PAS list
	RMPCLen         = 240 // rmpc: 48 bytes then the wq context
	CreateRMPInLen  = 272
	QueryRMPOutLen  = 272
	RMPCMailboxBit  = 0x100 // rmpc in CREATE_RMP in and QUERY_RMP out
	RMPCWQBit       = 0x180 // wq context inside the rmpc
	rmpcMailboxByte = RMPCMailboxBit / 8
)

// WQType is wq.wq_type.
type WQType uint8

const (
	WQTypeLinkedList WQType = 0
	WQTypeCyclic     WQType = 1
)

var wqTypeNames = map[uint8]string{0: "LINKED_LIST", 1: "CYCLIC"}

func (t WQType) String() string { return enumString(wqTypeNames, "WQ_TYPE", uint8(t)) }

// RMPState is rmpc.state.
type RMPState uint8

const (
	RMPStateRST RMPState = 0
	RMPStateRDY RMPState = 1
	RMPStateERR RMPState = 3
)

var rmpStateNames = map[uint8]string{0: "RST", 1: "RDY", 3: "ERR"}

func (s RMPState) String() string { return enumString(rmpStateNames, "RMP_STATE", uint8(s)) }

// WQCFields is the layout of the wq context, relative to its start.
var WQCFields = struct {
	WQType         Field // wq_type
	EndPaddingMode Field // end_padding_mode
	LWM            Field // lwm
	PD             Field // pd
	UARPage        Field // uar_page
	DBRAddr        Field // dbr_addr
	HWCounter      Field // hw_counter
	SWCounter      Field // sw_counter
	LogWQStride    Field // log_wq_stride
	LogWQPgSz      Field // log_wq_pg_sz
	LogWQSz        Field // log_wq_sz
	DBRUMEMValid   Field // dbr_umem_valid
	WQUMEMValid    Field // wq_umem_valid
	DBRUMEMID      Field // dbr_umem_id
	WQUMEMID       Field // wq_umem_id
	WQUMEMOffset   Field // wq_umem_offset
}{
	WQType:         F(0x000, 4),
	EndPaddingMode: F(0x005, 2),
	LWM:            F(0x030, 16),
	PD:             F(0x048, 24),
	UARPage:        F(0x068, 24),
	DBRAddr:        F(0x080, 64),
	HWCounter:      F(0x0c0, 32),
	SWCounter:      F(0x0e0, 32),
	LogWQStride:    F(0x10c, 4),
	LogWQPgSz:      F(0x113, 5),
	LogWQSz:        F(0x11b, 5),
	DBRUMEMValid:   F(0x120, 1),
	WQUMEMValid:    F(0x121, 1),
	DBRUMEMID:      F(0x140, 32),
	WQUMEMID:       F(0x160, 32),
	WQUMEMOffset:   F(0x180, 64),
}

// WQContext is the wq context of an RMP: the receive ring (entries
// 2^LogWQSz of 2^LogWQStride bytes) and its doorbell record, both in umems.
type WQContext struct {
	WQType         WQType
	EndPaddingMode uint8
	LWM            uint16
	PD             uint32
	UARPage        uint32
	DBRAddr        uint64
	HWCounter      uint32
	SWCounter      uint32
	LogWQStride    uint8
	LogWQPgSz      uint8
	LogWQSz        uint8
	DBRUMEMValid   bool
	WQUMEMValid    bool
	DBRUMEMID      uint32
	WQUMEMID       uint32
	WQUMEMOffset   uint64
}

func (x *WQContext) bindings() []binding {
	f := WQCFields
	return []binding{
		bindUint("wq_type", f.WQType, &x.WQType),
		bindUint("end_padding_mode", f.EndPaddingMode, &x.EndPaddingMode),
		bindUint("lwm", f.LWM, &x.LWM),
		bindUint("pd", f.PD, &x.PD),
		bindUint("uar_page", f.UARPage, &x.UARPage),
		bindUint("dbr_addr", f.DBRAddr, &x.DBRAddr),
		bindUint("hw_counter", f.HWCounter, &x.HWCounter),
		bindUint("sw_counter", f.SWCounter, &x.SWCounter),
		bindUint("log_wq_stride", f.LogWQStride, &x.LogWQStride),
		bindUint("log_wq_pg_sz", f.LogWQPgSz, &x.LogWQPgSz),
		bindUint("log_wq_sz", f.LogWQSz, &x.LogWQSz),
		bindBool("dbr_umem_valid", f.DBRUMEMValid, &x.DBRUMEMValid),
		bindBool("wq_umem_valid", f.WQUMEMValid, &x.WQUMEMValid),
		bindUint("dbr_umem_id", f.DBRUMEMID, &x.DBRUMEMID),
		bindUint("wq_umem_id", f.WQUMEMID, &x.WQUMEMID),
		bindUint("wq_umem_offset", f.WQUMEMOffset, &x.WQUMEMOffset),
	}
}

// Encode writes the wq context into b (at least 192 bytes).
func (x WQContext) Encode(b []byte) error {
	return encodeFields("encode wq", b, WQCLen, x.bindings())
}

// DecodeWQContext reads a wq context from b (at least 192 bytes).
func DecodeWQContext(b []byte) (WQContext, error) {
	var x WQContext
	err := decodeFields("decode wq", b, WQCLen, x.bindings())
	return x, err
}

// RMPCFields is the layout of the rmpc, relative to its start (the wq
// context is at RMPCWQBit).
var RMPCFields = struct {
	State             Field // state
	BasicCyclicRcvWQE Field // basic_cyclic_rcv_wqe
}{
	State:             F(0x08, 4),
	BasicCyclicRcvWQE: F(0x20, 1),
}

// RMPContext is the rmpc: state (RDY to create a usable SRQ), the receive
// WQE format (cyclic vs linked list) and the WQ.
type RMPContext struct {
	State             RMPState
	BasicCyclicRcvWQE bool
	WQ                WQContext
}

func (x *RMPContext) bindings() []binding {
	f := RMPCFields
	bs := []binding{
		bindUint("state", f.State, &x.State),
		bindBool("basic_cyclic_rcv_wqe", f.BasicCyclicRcvWQE, &x.BasicCyclicRcvWQE),
	}
	return append(bs, nest("wq", RMPCWQBit, x.WQ.bindings())...)
}

// Encode writes the rmpc into b (at least 240 bytes).
func (x RMPContext) Encode(b []byte) error {
	return encodeFields("encode rmpc", b, RMPCLen, x.bindings())
}

// DecodeRMPContext reads an rmpc from b (at least 240 bytes).
func DecodeRMPContext(b []byte) (RMPContext, error) {
	var x RMPContext
	err := decodeFields("decode rmpc", b, RMPCLen, x.bindings())
	return x, err
}

// CreateRMPIn is the CREATE_RMP input; its output is CreateOut (rmpn).
type CreateRMPIn struct {
	CmdHeader
	RMPC RMPContext
}

// Marshal builds the 272-byte mailbox.
func (in CreateRMPIn) Marshal() ([]byte, error) {
	const name = "CREATE_RMP in"
	b, err := marshalIn(name, in.CmdHeader, OpCreateRMP, CreateRMPInLen)
	if err != nil {
		return nil, err
	}
	if err := encodeFields("marshal "+name, b, CreateRMPInLen,
		nest("rmp_context", RMPCMailboxBit, in.RMPC.bindings())); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalCreateRMPIn parses a CREATE_RMP input.
func UnmarshalCreateRMPIn(b []byte) (CreateRMPIn, error) {
	const name = "CREATE_RMP in"
	var in CreateRMPIn
	h, err := unmarshalIn(name, b, OpCreateRMP, CreateRMPInLen)
	if err != nil {
		return in, err
	}
	in.CmdHeader = h
	in.RMPC, err = DecodeRMPContext(b[rmpcMailboxByte:])
	return in, err
}

// QueryRMPOut is the 272-byte QUERY_RMP output.
type QueryRMPOut struct {
	OutHeader
	RMPC RMPContext
}

// Marshal builds the output mailbox.
func (o QueryRMPOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryRMPOutLen)
	_ = o.OutHeader.Encode(b)
	if err := o.RMPC.Encode(b[rmpcMailboxByte:]); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryRMPOut parses a QUERY_RMP output.
func UnmarshalQueryRMPOut(b []byte) (QueryRMPOut, error) {
	var o QueryRMPOut
	h, err := unmarshalOut("QUERY_RMP out", b, QueryRMPOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	o.RMPC, err = DecodeRMPContext(b[rmpcMailboxByte:])
	return o, err
}
