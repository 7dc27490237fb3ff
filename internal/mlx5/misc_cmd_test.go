package mlx5

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseDump turns a worked-example dump ("offset: dw0 dw1 dw2 dw3" lines, only
// non-zero rows) into an n-byte mailbox.
func parseDump(t testing.TB, n int, dump string) []byte {
	t.Helper()
	b := make([]byte, n)
	for _, line := range strings.Split(strings.TrimSpace(dump), "\n") {
		off, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		require.True(t, ok, line)
		o, err := strconv.ParseUint(off, 16, 32)
		require.NoError(t, err)
		raw, err := hex.DecodeString(strings.ReplaceAll(rest, " ", ""))
		require.NoError(t, err)
		require.LessOrEqual(t, int(o)+len(raw), n, line)
		copy(b[o:], raw)
	}
	return b
}

// leafCount counts the members a binding table must cover: every exported
// non-struct field, arrays counting once; the command and output headers
// are not bindings.
func leafCount(v reflect.Type) int {
	n := 0
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Type == reflect.TypeOf(CmdHeader{}) || f.Type == reflect.TypeOf(OutHeader{}) {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			n += leafCount(f.Type)
			continue
		}
		n++
	}
	return n
}

// checkNoOverlap fails when two bindings share a bit, or a binding lies
// outside size bytes.
func checkNoOverlap(t *testing.T, size int, bs []binding) {
	t.Helper()
	owner := make([]string, size*8)
	for _, x := range bs {
		require.LessOrEqual(t, int(x.f.Bit+x.f.Width), size*8, "%s outside the layout", x.name)
		for i := x.f.Bit; i < x.f.Bit+x.f.Width; i++ {
			require.Empty(t, owner[i], "bit 0x%x of %s already belongs to %s", i, x.name, owner[i])
			owner[i] = x.name
		}
	}
}

// distinct returns a non-zero value that fits f and differs from its
// neighbours' patterns: alternating bits, the top bit always set so the
// full width is exercised.
func distinct(f Field) uint64 {
	v := uint64(0x5a5a5a5a5a5a5a5a) & f.Max()
	return v | 1<<(f.Width-1)
}

// roundTrip sets each bound field of T alone to a distinctive value and
// checks that encode writes exactly those bits and decode gives back the
// value; then it checks that max+1 is rejected without touching the buffer.
func roundTrip[T any](t *testing.T, size int, bind func(*T) []binding,
	encode func(T, []byte) error, decode func([]byte) (T, error)) {
	t.Helper()
	var zero T
	bs := bind(&zero)
	require.Equal(t, leafCount(reflect.TypeOf(zero)), len(bs), "every member must be bound")
	checkNoOverlap(t, size, bs)
	for i := range bs {
		var v T
		x := bind(&v)[i]
		want := make([]byte, size)
		if x.raw != nil {
			for j := range x.raw {
				x.raw[j] = byte(0xa1 + j)
			}
			SetBytes(want, x.f.Bit, x.raw)
		} else {
			x.set(distinct(x.f))
			Set(want, x.f, distinct(x.f))
		}
		got := make([]byte, size)
		require.NoError(t, encode(v, got), x.name)
		require.Equal(t, want, got, "%s: encode must touch only its own bits", x.name)
		back, err := decode(got)
		require.NoError(t, err, x.name)
		require.Equal(t, v, back, "%s: decode", x.name)

		if x.raw == nil && x.f.Width < 64 {
			var over T
			y := bind(&over)[i]
			y.set(x.f.Max() + 1)
			if y.get() == x.f.Max()+1 { // the Go type can hold an out-of-range value
				buf := make([]byte, size)
				err := encode(over, buf)
				require.ErrorIs(t, err, ErrRange, x.name)
				require.ErrorIs(t, err, syscall.EINVAL)
				require.Contains(t, err.Error(), x.name)
				require.Equal(t, make([]byte, size), buf, "%s: failed encode must not write", x.name)
			}
		}
	}
	// Short buffers are errors, never panics.
	for _, n := range []int{0, 1, size - 1} {
		require.ErrorIs(t, encode(zero, make([]byte, n)), ErrLength)
		_, err := decode(make([]byte, n))
		require.ErrorIs(t, err, ErrLength)
	}
}

func TestCmdHeaderRoundTrip(t *testing.T) {
	h := CmdHeader{Opcode: 0x1234, UID: 0x5678, VHCATunnelID: 0x9abc, OpMod: 0xdef0}
	b := make([]byte, 8)
	require.NoError(t, h.Encode(b))
	require.Equal(t, []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}, b)
	for name, f := range map[string]Field{"opcode": CmdHeaderFields.Opcode, "uid": CmdHeaderFields.UID,
		"vhca_tunnel_id": CmdHeaderFields.VHCATunnelID, "op_mod": CmdHeaderFields.OpMod} {
		require.NotZero(t, Get(b, f), name)
	}
	back, err := DecodeCmdHeader(b)
	require.NoError(t, err)
	require.Equal(t, h, back)
	_, err = DecodeCmdHeader(b[:7])
	require.ErrorIs(t, err, ErrLength)
	require.ErrorIs(t, h.Encode(b[:7]), ErrLength)
}

func TestOutHeader(t *testing.T) {
	b := make([]byte, 16)
	for i := range b {
		b[i] = 0xff
	}
	h := OutHeader{Status: StatusBadParam, Syndrome: 0xdeadbeef}
	require.NoError(t, h.Encode(b))
	require.Equal(t, []byte{3, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef}, b[:8])
	st, syn := OutStatus(b)
	require.Equal(t, StatusBadParam, st)
	require.Equal(t, uint32(0xdeadbeef), syn)
	back, err := DecodeOutHeader(b)
	require.NoError(t, err)
	require.Equal(t, h, back)

	err = back.Err("devx_obj_create", OpCreateQP)
	require.ErrorIs(t, err, syscall.EREMOTEIO)
	require.ErrorIs(t, err, syscall.EINVAL) // BAD_PARAM maps to EINVAL
	require.Contains(t, err.Error(), "CREATE_QP")
	require.NoError(t, OutHeader{}.Err("x", OpNOP))

	eo := ErrorOut(QueryQPOutLen, StatusBadResState, 7)
	require.Len(t, eo, QueryQPOutLen)
	st, syn = OutStatus(eo)
	require.Equal(t, StatusBadResState, st)
	require.Equal(t, uint32(7), syn)
}

func TestObjCmdIn(t *testing.T) {
	cases := []struct {
		in ObjCmdIn
		op Opcode
	}{
		{DestroyCQIn(0x400), OpDestroyCQ}, {QueryCQIn(0x401), OpQueryCQ},
		{DestroyQPIn(0x1a2b), OpDestroyQP}, {QueryQPIn(0xffffff), OpQueryQP},
		{DestroyRMPIn(5), OpDestroyRMP}, {QueryRMPIn(6), OpQueryRMP},
	}
	for _, c := range cases {
		t.Run(OpcodeName(c.op), func(t *testing.T) {
			b, err := c.in.Marshal()
			require.NoError(t, err)
			require.Len(t, b, 16)
			require.Equal(t, c.op, Opcode(Get(b, CmdHeaderFields.Opcode)))
			require.Equal(t, uint64(c.in.ID), Get(b, ObjIDField))
			// Nothing but opcode and id is written.
			want := make([]byte, 16)
			Set(want, CmdHeaderFields.Opcode, uint64(c.op))
			Set(want, ObjIDField, uint64(c.in.ID))
			require.Equal(t, want, b)
			back, err := UnmarshalObjCmdIn(b, c.op)
			require.NoError(t, err)
			require.Equal(t, c.in, back)
			// Wrong opcode / length.
			other := OpQueryQP
			if c.op == OpQueryQP {
				other = OpDestroyQP
			}
			_, err = UnmarshalObjCmdIn(b, other)
			require.ErrorIs(t, err, ErrOpcode)
			_, err = UnmarshalObjCmdIn(b[:15], c.op)
			require.ErrorIs(t, err, ErrLength)
			_, err = UnmarshalObjCmdIn(append(b, 0), c.op)
			require.ErrorIs(t, err, ErrLength)
		})
	}
	_, err := ObjCmdIn{CmdHeader: CmdHeader{Opcode: OpCreateQP}, ID: 1}.Marshal()
	require.ErrorIs(t, err, ErrOpcode)
	_, err = UnmarshalObjCmdIn(make([]byte, 16), OpCreateQP)
	require.ErrorIs(t, err, ErrOpcode)
	_, err = DestroyQPIn(1 << 24).Marshal()
	require.ErrorIs(t, err, ErrRange)
}

func TestCreateOut(t *testing.T) {
	o := CreateOut{OutHeader: OutHeader{Status: StatusOK, Syndrome: 0}, ID: 0x1a2b}
	b, err := o.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, 16, "0000: 00000000 00000000 00001a2b 00000000"), b)
	back, err := UnmarshalCreateOut(b)
	require.NoError(t, err)
	require.Equal(t, o, back)
	_, err = CreateOut{ID: 1 << 24}.Marshal()
	require.ErrorIs(t, err, ErrRange)
	for _, n := range []int{0, 8, 15, 17} {
		_, err = UnmarshalCreateOut(make([]byte, n))
		require.ErrorIs(t, err, ErrLength, "len %d", n)
	}
}

func TestNOP(t *testing.T) {
	b, err := NOPIn{}.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, 16, "0000: 080d0000 00000000 00000000 00000000"), b)
	in, err := UnmarshalNOPIn(b)
	require.NoError(t, err)
	require.Equal(t, OpNOP, in.Opcode)
	_, err = NOPIn{CmdHeader{Opcode: OpCreateCQ}}.Marshal()
	require.ErrorIs(t, err, ErrOpcode)
	_, err = UnmarshalNOPIn(b[:12])
	require.ErrorIs(t, err, ErrLength)
}

func TestHCAVportContext(t *testing.T) {
	roundTrip(t, HCAVportContextLen, (*HCAVportContext).bindings, HCAVportContext.Encode, DecodeHCAVportContext)

	in := QueryHCAVportContextIn{PortNum: 1}
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, 16, "0000: 07620000 00000000 00010000 00000000"), b)
	back, err := UnmarshalQueryHCAVportContextIn(b)
	require.NoError(t, err)
	in.Opcode = OpQueryHCAVportContext
	require.Equal(t, in, back)
	_, err = QueryHCAVportContextIn{PortNum: 16}.Marshal()
	require.ErrorIs(t, err, ErrRange)

	// lid at context bytes 96..97 = output bytes 112..113.
	out := QueryHCAVportContextOut{Context: HCAVportContext{LID: 0x1234, PortState: 4}}
	ob, err := out.Marshal()
	require.NoError(t, err)
	require.Len(t, ob, QueryHCAVportContextOutLen)
	require.Equal(t, []byte{0x12, 0x34}, ob[112:114])
	require.Equal(t, byte(0x40), ob[16+35])
	oback, err := UnmarshalQueryHCAVportContextOut(ob)
	require.NoError(t, err)
	require.Equal(t, out, oback)
	_, err = UnmarshalQueryHCAVportContextOut(ob[:527])
	require.ErrorIs(t, err, ErrLength)
}

func TestLayoutErrorText(t *testing.T) {
	_, err := UnmarshalCreateQPIn(make([]byte, 10))
	var le *LayoutError
	require.True(t, errors.As(err, &le))
	require.Equal(t, "mlx5: unmarshal CREATE_QP in: wrong length (got 10 bytes, want 272 or 464)", err.Error())
	b := make([]byte, CreateQPInLen)
	Set(b, CmdHeaderFields.Opcode, uint64(OpCreateCQ))
	_, err = UnmarshalCreateQPIn(b)
	require.EqualError(t, err, "mlx5: unmarshal CREATE_QP in: field opcode: unexpected opcode (got CREATE_CQ, want CREATE_QP)")
	require.ErrorIs(t, err, syscall.EINVAL)
	require.False(t, errors.Is(err, ErrLength))
	require.Equal(t, fmt.Sprint(ErrOpcode), "unexpected opcode")
}

// bodyCodec adapts a mailbox's Marshal/Unmarshal to roundTrip: the encoder
// writes the marshalled mailbox with the header cleared (Marshal adds the
// opcode, which is not a binding), the decoder puts the opcode back before
// parsing and clears the header of the result.
func bodyCodec[T any](op Opcode, marshal func(T) ([]byte, error), unmarshal func([]byte) (T, error),
	clear func(*T)) (func(T, []byte) error, func([]byte) (T, error)) {
	enc := func(v T, b []byte) error {
		out, err := marshal(v)
		if err != nil {
			return err
		}
		if len(b) < len(out) {
			return lengthError("test encode", len(b), fmt.Sprint(len(out)))
		}
		copy(b, out)
		copy(b[:CmdHeaderLen], make([]byte, CmdHeaderLen))
		return nil
	}
	dec := func(b []byte) (T, error) {
		c := append([]byte(nil), b...)
		if len(c) >= CmdHeaderLen {
			_ = CmdHeader{Opcode: op}.Encode(c)
		}
		v, err := unmarshal(c)
		clear(&v)
		return v, err
	}
	return enc, dec
}

// remarshal checks the parser contract on fuzz input: a successful parse
// re-marshals without error and parses back to the same value.
func remarshal[T any](t *testing.T, v T, marshal func(T) ([]byte, error), unmarshal func([]byte) (T, error)) {
	t.Helper()
	b, err := marshal(v)
	if err != nil {
		t.Fatalf("re-marshal of a parsed value failed: %v", err)
	}
	back, err := unmarshal(b)
	if err != nil {
		t.Fatalf("re-parse failed: %v", err)
	}
	if !reflect.DeepEqual(v, back) {
		t.Fatalf("re-parse differs:\n%+v\n%+v", v, back)
	}
}

// FuzzCmdIn feeds arbitrary bytes to every input-mailbox parser except the
// QP transitions (FuzzModifyQPIn) and QUERY_HCA_CAP (FuzzQueryHCACap).
func FuzzCmdIn(f *testing.F) {
	f.Add(parseDump(f, CreateCQInLen, goldenCreateCQ))
	f.Add(parseDump(f, CreateQPInLen, goldenCreateQP))
	f.Add(parseDump(f, CreateQPInExtLen, goldenCreateQP))
	for _, in := range []ObjCmdIn{DestroyCQIn(0x400), QueryCQIn(1), DestroyQPIn(0x1a2b), QueryQPIn(2), DestroyRMPIn(3), QueryRMPIn(4)} {
		b, _ := in.Marshal()
		f.Add(b)
	}
	for _, m := range []interface{ Marshal() ([]byte, error) }{NOPIn{}, QueryHCAVportContextIn{PortNum: 1},
		QueryRoCEAddressIn{RoCEAddressIndex: 3}, CreateRMPIn{RMPC: RMPContext{State: RMPStateRDY}}} {
		b, _ := m.Marshal()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeCmdHeader(b)
		if err != nil {
			return
		}
		if in, err := UnmarshalCreateCQIn(b); err == nil {
			remarshal(t, in, CreateCQIn.Marshal, UnmarshalCreateCQIn)
		}
		if in, err := UnmarshalCreateQPIn(b); err == nil && !in.QPCExt {
			remarshal(t, in, CreateQPIn.Marshal, UnmarshalCreateQPIn)
		}
		if in, err := UnmarshalCreateRMPIn(b); err == nil {
			remarshal(t, in, CreateRMPIn.Marshal, UnmarshalCreateRMPIn)
		}
		if in, err := UnmarshalNOPIn(b); err == nil {
			remarshal(t, in, NOPIn.Marshal, UnmarshalNOPIn)
		}
		if in, err := UnmarshalQueryHCAVportContextIn(b); err == nil {
			remarshal(t, in, QueryHCAVportContextIn.Marshal, UnmarshalQueryHCAVportContextIn)
		}
		if in, err := UnmarshalQueryRoCEAddressIn(b); err == nil {
			remarshal(t, in, QueryRoCEAddressIn.Marshal, UnmarshalQueryRoCEAddressIn)
		}
		if in, err := UnmarshalObjCmdIn(b, h.Opcode); err == nil {
			remarshal(t, in, ObjCmdIn.Marshal, func(b []byte) (ObjCmdIn, error) { return UnmarshalObjCmdIn(b, h.Opcode) })
		}
	})
}

// FuzzCmdOut feeds arbitrary bytes to every output-mailbox parser.
func FuzzCmdOut(f *testing.F) {
	for _, m := range []interface{ Marshal() ([]byte, error) }{
		CreateOut{ID: 0x1a2b}, QueryCQOut{CQC: goldenCreateCQIn().CQC}, QueryQPOut{QPC: goldenCreateQPIn().QPC},
		QueryRMPOut{RMPC: RMPContext{State: RMPStateRDY}}, QueryRoCEAddressOut{Addr: RoCEAddr{RoCEVersion: RoCEv2}},
		QueryHCAVportContextOut{Context: HCAVportContext{LID: 7}},
		QueryNICVportContextOut{Context: NICVportContext{PermanentAddress: [6]byte{2, 0, 0, 0, 0, 1}}},
		QueryHCACapOut{Cap: [CapLen]byte{0: 0x80, CapLen - 1: 1}},
	} {
		b, _ := m.Marshal()
		f.Add(b)
	}
	f.Add(ErrorOut(16, StatusBadParam, 0x1234))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeOutHeader(b)
		if o, err := UnmarshalCreateOut(b); err == nil {
			remarshal(t, o, CreateOut.Marshal, UnmarshalCreateOut)
		}
		if o, err := UnmarshalQueryCQOut(b); err == nil {
			remarshal(t, o, QueryCQOut.Marshal, UnmarshalQueryCQOut)
		}
		if o, err := UnmarshalQueryQPOut(b); err == nil {
			remarshal(t, o, QueryQPOut.Marshal, UnmarshalQueryQPOut)
		}
		if o, err := UnmarshalQueryRMPOut(b); err == nil {
			remarshal(t, o, QueryRMPOut.Marshal, UnmarshalQueryRMPOut)
		}
		if o, err := UnmarshalQueryRoCEAddressOut(b); err == nil {
			remarshal(t, o, QueryRoCEAddressOut.Marshal, UnmarshalQueryRoCEAddressOut)
		}
		if o, err := UnmarshalQueryHCAVportContextOut(b); err == nil {
			remarshal(t, o, QueryHCAVportContextOut.Marshal, UnmarshalQueryHCAVportContextOut)
		}
		if o, err := UnmarshalQueryNICVportContextOut(b); err == nil {
			remarshal(t, o, QueryNICVportContextOut.Marshal, UnmarshalQueryNICVportContextOut)
		}
		if o, err := UnmarshalQueryHCACapOut(b); err == nil {
			remarshal(t, o, QueryHCACapOut.Marshal, UnmarshalQueryHCACapOut)
		}
	})
}

// MarshalTo writes the status header and every member and leaves the bits no
// member names as they are (the emulator lays a stored context under the
// live fields); a value too wide for its field fails and writes nothing.
func TestOutMarshalTo(t *testing.T) {
	b := bytes.Repeat([]byte{0xff}, QueryQPOutLen)
	o := QueryQPOut{OptParamMask: 0x12, QPC: QPContext{State: QPStateRTS, NextSendPSN: 0x123456}}
	if err := o.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalQueryQPOut(b)
	if err != nil || !reflect.DeepEqual(back, o) {
		t.Fatalf("named fields: got %+v, %v; want %+v", back, err, o)
	}
	if want := make([]byte, CmdHeaderLen); !bytes.Equal(b[:CmdHeaderLen], want) {
		t.Errorf("status header % x, want zeros", b[:CmdHeaderLen])
	}
	// Bytes 8..15 and 20..23 are reserved in QUERY_QP out.
	if !bytes.Equal(b[8:16], bytes.Repeat([]byte{0xff}, 8)) || !bytes.Equal(b[20:24], bytes.Repeat([]byte{0xff}, 4)) {
		t.Errorf("reserved bytes were written: % x", b[:24])
	}

	before := bytes.Clone(b)
	err = QueryQPOut{QPC: QPContext{NextSendPSN: 1 << 24}}.MarshalTo(b)
	var le *LayoutError
	if !errors.As(err, &le) || !errors.Is(err, ErrRange) || le.Field != "qpc.next_send_psn" {
		t.Fatalf("psn past 24 bits: got %v, want a LayoutError for qpc.next_send_psn (ErrRange)", err)
	}
	if !bytes.Equal(b, before) {
		t.Errorf("a failed MarshalTo wrote to the mailbox")
	}
	if err := o.MarshalTo(b[:QueryQPOutLen-1]); !errors.Is(err, ErrLength) {
		t.Errorf("short mailbox: got %v, want ErrLength", err)
	}
}
