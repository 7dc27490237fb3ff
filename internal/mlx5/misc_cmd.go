package mlx5

import (
	"errors"
	"fmt"
	"syscall"
)

// This file holds what every command layout shares: the layout errors, the
// field-binding machinery the typed structs use to encode and decode
// themselves, the output header's codec, the 16-byte "object id" commands
// and CreateOut. The mailbox headers, NOP and the vport queries' inputs and
// outputs are generated from prm/misc.prm (misc_gen.go).

// Sentinel causes of a LayoutError; test them with errors.Is.
var (
	// ErrLength: the mailbox or structure has the wrong size.
	ErrLength = errors.New("wrong length")
	// ErrRange: a value does not fit its PRM field.
	ErrRange = errors.New("value does not fit its field")
	// ErrOpcode: an input mailbox carries another command's opcode.
	ErrOpcode = errors.New("unexpected opcode")
	// ErrInvalid: a value is outside the set the command accepts (an
	// unknown capability type, a field that must be zero in this form).
	ErrInvalid = errors.New("invalid value")
)

// LayoutError reports a PRM layout that could not be built or parsed: which
// operation (the layout or command and the direction), which field, and why.
// It matches its sentinel cause (ErrLength, ErrRange, ErrOpcode, ErrInvalid)
// and syscall.EINVAL with errors.Is.
type LayoutError struct {
	Op     string // "encode qpc", "unmarshal CREATE_QP in", ...
	Field  string // PRM field name, "" for whole-layout problems
	Detail string // human-readable specifics
	Err    error  // one of the sentinel causes
}

func (e *LayoutError) Error() string {
	s := "mlx5: " + e.Op
	if e.Field != "" {
		s += ": field " + e.Field
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the sentinel cause.
func (e *LayoutError) Unwrap() error { return e.Err }

// Is makes a layout error match syscall.EINVAL, the errno a kernel or
// firmware gives for the same mistake.
func (e *LayoutError) Is(target error) bool { return target == syscall.EINVAL }

func lengthError(op string, got int, want string) error {
	return &LayoutError{Op: op, Err: ErrLength, Detail: fmt.Sprintf("got %d bytes, want %s", got, want)}
}

// needLen checks that b holds at least n bytes.
func needLen(op string, b []byte, n int) error {
	if len(b) < n {
		return lengthError(op, len(b), fmt.Sprintf("at least %d", n))
	}
	return nil
}

// exactLen checks that b is one of the accepted mailbox sizes.
func exactLen(op string, b []byte, sizes ...int) error {
	for _, n := range sizes {
		if len(b) == n {
			return nil
		}
	}
	want := fmt.Sprint(sizes[0])
	for _, n := range sizes[1:] {
		want += fmt.Sprintf(" or %d", n)
	}
	return lengthError(op, len(b), want)
}

// binding ties one PRM field to one Go struct member, so a struct can be
// encoded, decoded, and walked field by field (tests, CopyFields) from one
// table. Scalars use get/set; byte arrays (GIDs, MACs) alias the member.
type binding struct {
	name string
	f    Field
	get  func() uint64
	set  func(uint64)
	raw  []byte
}

func bindUint[T ~uint8 | ~uint16 | ~uint32 | ~uint64](name string, f Field, p *T) binding {
	return binding{
		name: name,
		f:    f,
		get:  func() uint64 { return uint64(*p) },
		set:  func(v uint64) { *p = T(v) },
	}
}

func bindBool(name string, f Field, p *bool) binding {
	return binding{
		name: name,
		f:    f,
		get: func() uint64 {
			if *p {
				return 1
			}
			return 0
		},
		set: func(v uint64) { *p = v != 0 },
	}
}

func bindRaw(name string, f Field, p []byte) binding {
	return binding{name: name, f: f, raw: p}
}

// nest moves the bindings of an embedded structure to bit base and prefixes
// their names with "prefix.".
func nest(prefix string, base uint32, bs []binding) []binding {
	for i := range bs {
		bs[i].name = prefix + "." + bs[i].name
		bs[i].f = bs[i].f.At(base)
	}
	return bs
}

// encodeFields validates every bound value first and only then writes them,
// so a failed encode leaves b untouched. Bits not covered by a binding
// (reserved bits) are not written.
func encodeFields(op string, b []byte, size int, bs []binding) error {
	if err := needLen(op, b, size); err != nil {
		return err
	}
	for _, x := range bs {
		if x.raw == nil && !x.f.Fits(x.get()) {
			return &LayoutError{Op: op, Field: x.name, Err: ErrRange,
				Detail: fmt.Sprintf("0x%x does not fit %d bits", x.get(), x.f.Width)}
		}
	}
	for _, x := range bs {
		if x.raw != nil {
			SetBytes(b, x.f.Bit, x.raw)
			continue
		}
		Set(b, x.f, x.get())
	}
	return nil
}

// decodeFields reads every bound field of b after a length check.
func decodeFields(op string, b []byte, size int, bs []binding) error {
	if err := needLen(op, b, size); err != nil {
		return err
	}
	for _, x := range bs {
		if x.raw != nil {
			copy(x.raw, Bytes(b, x.f.Bit, len(x.raw)))
			continue
		}
		x.set(Get(b, x.f))
	}
	return nil
}

// findBinding returns the binding called name.
func findBinding(bs []binding, name string) (binding, bool) {
	for _, x := range bs {
		if x.name == name {
			return x, true
		}
	}
	return binding{}, false
}

// ObjIDField is the 24-bit object number at bit 0x48 shared by every
// command that names one object (cqn, qpn, rmpn in DESTROY_*, QUERY_*,
// the QP transitions) and by every CREATE_* output.
var ObjIDField = F(0x48, 24)

// Encode writes status and syndrome into b, clearing the reserved bytes
// between them.
func (h OutHeader) Encode(b []byte) error {
	const op = "encode output header"
	if err := needLen(op, b, CmdHeaderLen); err != nil {
		return err
	}
	clear(b[:CmdHeaderLen])
	return encodeFields(op, b, CmdHeaderLen, h.bindings())
}

// DecodeOutHeader reads the status header of any output mailbox.
func DecodeOutHeader(b []byte) (OutHeader, error) {
	var h OutHeader
	err := decodeFields("decode output header", b, CmdHeaderLen, h.bindings())
	return h, err
}

// Err returns nil for status OK and otherwise a *CmdError for command op
// (the header itself does not know its opcode).
func (h OutHeader) Err(op string, opcode Opcode) error {
	if h.Status == StatusOK {
		return nil
	}
	return &CmdError{Op: op, Opcode: opcode, Status: h.Status, Syndrome: h.Syndrome, Errno: syscall.EREMOTEIO}
}

// ErrorOut builds the 16-byte-or-longer output mailbox of a rejected command:
// status and syndrome, everything else zero. n is the command's output size
// (at least 8).
func ErrorOut(n int, status Status, syndrome uint32) []byte {
	if n < CmdHeaderLen {
		n = CmdHeaderLen
	}
	b := make([]byte, n)
	_ = OutHeader{Status: status, Syndrome: syndrome}.Encode(b)
	return b
}

// marshalIn allocates an n-byte input mailbox and writes h with opcode op.
// A header that already names a different opcode is an error.
func marshalIn(name string, h CmdHeader, op Opcode, n int) ([]byte, error) {
	if h.Opcode != 0 && h.Opcode != op {
		return nil, &LayoutError{Op: "marshal " + name, Field: "opcode", Err: ErrOpcode,
			Detail: fmt.Sprintf("header says %s, want %s", OpcodeName(h.Opcode), OpcodeName(op))}
	}
	h.Opcode = op
	b := make([]byte, n)
	_ = h.Encode(b)
	return b, nil
}

// unmarshalIn checks the size and opcode of an input mailbox and returns its
// header.
func unmarshalIn(name string, b []byte, op Opcode, sizes ...int) (CmdHeader, error) {
	what := "unmarshal " + name
	if err := exactLen(what, b, sizes...); err != nil {
		return CmdHeader{}, err
	}
	h, _ := DecodeCmdHeader(b)
	if h.Opcode != op {
		return CmdHeader{}, &LayoutError{Op: what, Field: "opcode", Err: ErrOpcode,
			Detail: fmt.Sprintf("got %s, want %s", OpcodeName(h.Opcode), OpcodeName(op))}
	}
	return h, nil
}

// unmarshalOut checks the size of an output mailbox and returns its header.
func unmarshalOut(name string, b []byte, size int) (OutHeader, error) {
	if err := exactLen("unmarshal "+name, b, size); err != nil {
		return OutHeader{}, err
	}
	h, _ := DecodeOutHeader(b)
	return h, nil
}

// setObjID validates and stores a 24-bit object number.
func setObjID(op string, b []byte, name string, id uint32) error {
	if !ObjIDField.Fits(uint64(id)) {
		return &LayoutError{Op: op, Field: name, Err: ErrRange,
			Detail: fmt.Sprintf("0x%x does not fit 24 bits", id)}
	}
	Set(b, ObjIDField, uint64(id))
	return nil
}

// ObjCmdIn is the 16-byte input that names one object by its 24-bit number
// at bit 0x48: DESTROY_CQ (cqn), QUERY_CQ (cqn), DESTROY_QP (qpn), QUERY_QP
// (qpn), DESTROY_RMP (rmpn), QUERY_RMP (rmpn). The opcode in the header
// selects the command; Marshal requires it to be one of those.
type ObjCmdIn struct {
	CmdHeader
	ID uint32 // cqn / qpn / rmpn
}

var objCmdOps = map[Opcode]string{
	OpDestroyCQ: "cqn", OpQueryCQ: "cqn",
	OpDestroyQP: "qpn", OpQueryQP: "qpn",
	OpDestroyRMP: "rmpn", OpQueryRMP: "rmpn",
	OpDestroyEQ: "eq_number", OpQueryEQ: "eq_number",
}

// Marshal builds the 16-byte mailbox.
func (in ObjCmdIn) Marshal() ([]byte, error) {
	name, ok := objCmdOps[in.Opcode]
	if !ok {
		return nil, &LayoutError{Op: "marshal object command", Field: "opcode", Err: ErrOpcode,
			Detail: OpcodeName(in.Opcode) + " does not name one object"}
	}
	b, _ := marshalIn(OpcodeName(in.Opcode)+" in", in.CmdHeader, in.Opcode, CmdShortLen)
	if err := setObjID("marshal "+OpcodeName(in.Opcode)+" in", b, name, in.ID); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalObjCmdIn parses a 16-byte single-object input whose opcode must
// be op (OpDestroyCQ, OpQueryQP, ...).
func UnmarshalObjCmdIn(b []byte, op Opcode) (ObjCmdIn, error) {
	if _, ok := objCmdOps[op]; !ok {
		return ObjCmdIn{}, &LayoutError{Op: "unmarshal object command", Field: "opcode", Err: ErrOpcode,
			Detail: OpcodeName(op) + " does not name one object"}
	}
	h, err := unmarshalIn(OpcodeName(op)+" in", b, op, CmdShortLen)
	if err != nil {
		return ObjCmdIn{}, err
	}
	return ObjCmdIn{CmdHeader: h, ID: Get32(b, ObjIDField)}, nil
}

// DestroyCQIn is DESTROY_CQ (0x401) naming cqn.
func DestroyCQIn(cqn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpDestroyCQ}, ID: cqn}
}

// QueryCQIn is QUERY_CQ (0x402) naming cqn.
func QueryCQIn(cqn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpQueryCQ}, ID: cqn}
}

// DestroyQPIn is DESTROY_QP (0x501) naming qpn.
func DestroyQPIn(qpn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpDestroyQP}, ID: qpn}
}

// QueryQPIn is QUERY_QP (0x50b) naming qpn.
func QueryQPIn(qpn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpQueryQP}, ID: qpn}
}

// DestroyRMPIn is DESTROY_RMP (0x90e) naming rmpn.
func DestroyRMPIn(rmpn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpDestroyRMP}, ID: rmpn}
}

// QueryRMPIn is QUERY_RMP (0x90f) naming rmpn.
func QueryRMPIn(rmpn uint32) ObjCmdIn {
	return ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpQueryRMP}, ID: rmpn}
}

// CreateOut is the 16-byte output of CREATE_CQ (cqn), CREATE_QP (qpn) and
// CREATE_RMP (rmpn): the status header and the new object's number at bit
// 0x48. The same layout, with ID 0, is the output of every command that
// returns only a status (DESTROY_*, the QP transitions, NOP).
type CreateOut struct {
	OutHeader
	ID uint32
}

// Aliases that name the output by command.
type (
	CreateCQOut  = CreateOut
	CreateQPOut  = CreateOut
	CreateRMPOut = CreateOut
)

// Marshal builds the 16-byte output mailbox.
func (o CreateOut) Marshal() ([]byte, error) {
	b := make([]byte, CmdShortLen)
	_ = o.OutHeader.Encode(b)
	if err := setObjID("marshal create output", b, "id", o.ID); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalCreateOut parses a 16-byte CREATE_* (or status-only) output.
func UnmarshalCreateOut(b []byte) (CreateOut, error) {
	h, err := unmarshalOut("create output", b, CmdShortLen)
	if err != nil {
		return CreateOut{}, err
	}
	return CreateOut{OutHeader: h, ID: Get32(b, ObjIDField)}, nil
}
