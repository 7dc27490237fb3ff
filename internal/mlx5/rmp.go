package mlx5

// SRQs through CREATE_RMP (0x90c): the RMP context (rmpc) with its embedded
// WQ context, CREATE_RMP in and the sizes are generated from prm/rmp.prm
// (rmp_gen.go); QUERY_RMP out is here. DESTROY_RMP and QUERY_RMP inputs are
// ObjCmdIn (misc_cmd.go).

const rmpcMailboxByte = RMPCMailboxBit / 8

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
