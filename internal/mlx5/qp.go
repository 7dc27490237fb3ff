package mlx5

// CREATE_QP (0x500) and QUERY_QP (0x50b).
// DESTROY_QP and QUERY_QP inputs are ObjCmdIn (misc_cmd.go); CREATE_QP's
// output is CreateOut. The transitions are in transition.go.

// Sizes and positions of the QP command layouts.
const (
	CreateQPInLen    = 272 // GN/RC-ifc layout; Marshal produces this
	CreateQPInExtLen = 464 // DPDK/kernel layout with qpc_ext; accepted by Unmarshal
	QueryQPOutLen    = 272
	// QPCMailboxBit is the qpc position in CREATE_QP in, the transition
	// inputs and QUERY_QP out.
	QPCMailboxBit  = 0x0c0
	qpcMailboxByte = QPCMailboxBit / 8
)

// CreateQPInFields is the CREATE_QP input layout outside the qpc (absolute
// bit addresses in the mailbox).
var CreateQPInFields = struct {
	QPCExt       Field // qpc_ext (464-byte layout only)
	OptParamMask Field // opt_param_mask (0 for CREATE)
	WQUMEMOffset Field // wq_umem_offset
	WQUMEMID     Field // wq_umem_id
	WQUMEMValid  Field // wq_umem_valid
}{
	QPCExt:       F(0x040, 1),
	OptParamMask: F(0x080, 32),
	WQUMEMOffset: F(0x800, 64),
	WQUMEMID:     F(0x840, 32),
	WQUMEMValid:  F(0x860, 1),
}

// CreateQPIn is the CREATE_QP input: the qpc (state RST implied) and the
// umem holding the WQ buffer (RQ first, then SQ). WQUMEMOffset is reserved
// in the GN/RC-ifc layouts: keep it 0 unless verified on the firmware.
type CreateQPIn struct {
	CmdHeader
	QPCExt       bool
	OptParamMask uint32
	QPC          QPContext
	WQUMEMOffset uint64
	WQUMEMID     uint32
	WQUMEMValid  bool
}

func (in *CreateQPIn) bindings() []binding {
	f := CreateQPInFields
	bs := []binding{
		bindBool("qpc_ext", f.QPCExt, &in.QPCExt),
		bindUint("opt_param_mask", f.OptParamMask, &in.OptParamMask),
	}
	bs = append(bs, nest("qpc", QPCMailboxBit, in.QPC.bindings())...)
	return append(bs,
		bindUint("wq_umem_offset", f.WQUMEMOffset, &in.WQUMEMOffset),
		bindUint("wq_umem_id", f.WQUMEMID, &in.WQUMEMID),
		bindBool("wq_umem_valid", f.WQUMEMValid, &in.WQUMEMValid),
	)
}

// Marshal builds the 272-byte mailbox. qpc_ext needs the 464-byte layout
// and its data, which this library never sends: it is an ErrInvalid error.
func (in CreateQPIn) Marshal() ([]byte, error) {
	const name = "CREATE_QP in"
	if in.QPCExt {
		return nil, &LayoutError{Op: "marshal " + name, Field: "qpc_ext", Err: ErrInvalid,
			Detail: "qpc_data_ext is not supported in CREATE_QP"}
	}
	b, err := marshalIn(name, in.CmdHeader, OpCreateQP, CreateQPInLen)
	if err != nil {
		return nil, err
	}
	if err := encodeFields("marshal "+name, b, CreateQPInLen, in.bindings()); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalCreateQPIn parses a CREATE_QP input of 272 or 464 bytes (the
// qpc_data_ext tail of the long form is not decoded; QPCExt tells whether
// the sender marked it valid).
func UnmarshalCreateQPIn(b []byte) (CreateQPIn, error) {
	const name = "CREATE_QP in"
	var in CreateQPIn
	h, err := unmarshalIn(name, b, OpCreateQP, CreateQPInLen, CreateQPInExtLen)
	if err != nil {
		return in, err
	}
	in.CmdHeader = h
	err = decodeFields("unmarshal "+name, b, CreateQPInLen, in.bindings())
	return in, err
}

// QueryQPOut is the 272-byte QUERY_QP output: the live qpc, with state and
// the counters filled in.
type QueryQPOut struct {
	OutHeader
	OptParamMask uint32
	QPC          QPContext
}

// Marshal builds the 272-byte output mailbox.
func (o QueryQPOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryQPOutLen)
	_ = o.OutHeader.Encode(b)
	Set(b, CreateQPInFields.OptParamMask, uint64(o.OptParamMask))
	if err := o.QPC.Encode(b[qpcMailboxByte:]); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryQPOut parses a QUERY_QP output.
func UnmarshalQueryQPOut(b []byte) (QueryQPOut, error) {
	var o QueryQPOut
	h, err := unmarshalOut("QUERY_QP out", b, QueryQPOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	o.OptParamMask = Get32(b, CreateQPInFields.OptParamMask)
	o.QPC, err = DecodeQPContext(b[qpcMailboxByte:])
	return o, err
}
