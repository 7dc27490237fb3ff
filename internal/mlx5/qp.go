package mlx5

// CREATE_QP (0x500) and QUERY_QP (0x50b). CreateQPIn, its layout, the sizes
// and QUERY_QP out are generated from prm/qp.prm (qp_gen.go); CREATE_QP's
// Marshal and Unmarshal are written here because it has two sizes. DESTROY_QP and QUERY_QP
// inputs are ObjCmdIn (misc_cmd.go); CREATE_QP's output is CreateOut. The
// transitions are in transition.go.

const qpcMailboxByte = QPCMailboxBit / 8

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
