package mlx5

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CREATE_EQ of a 1024-entry EQ on UAR page 0x12, interrupt vector 3,
// asking for COMP events, its ring at 0x7f0000001000: log_eq_size in
// eqc dword 3 [28:24] with uar_page below, intr in dword 5 [11:0], the
// first 64 bits of event_bitmask at byte 88, the PAS entry at byte 272.
const goldenCreateEQ = `
0000: 03010000 00000000 00000000 00000000
0010: 00000000 00000000 00000000 0a000012
0020: 00000000 00000003 00000000 00000000
0050: 00000000 00000000 00000000 00000001
0110: 00007f00 00001000`

func TestCreateEQGolden(t *testing.T) {
	in := CreateEQIn{EQC: EQContext{LogEQSize: 10, UARPage: 0x12, Intr: 3}, EventBitmask: EventMask(EventComp), PAS: 0x7f0000001000}
	b, err := in.Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, CreateEQInLen, goldenCreateEQ), b)
	back, err := UnmarshalCreateEQIn(b)
	require.NoError(t, err)
	in.Opcode = OpCreateEQ
	require.Equal(t, in, back)
}

func TestEQContextRoundTrip(t *testing.T) {
	roundTrip(t, EQCLen, (*EQContext).bindings, EQContext.Encode, DecodeEQContext)
}

func TestEQERoundTrip(t *testing.T) {
	roundTrip(t, EQESize, (*EQE).bindings, EQE.Encode, DecodeEQE)
}

func TestDestroyEQIn(t *testing.T) {
	b, err := DestroyEQIn(0x14).Marshal()
	require.NoError(t, err)
	require.Equal(t, parseDump(t, CmdShortLen, "0000: 03020000 00000000 00000014 00000000"), b)
	in, err := UnmarshalObjCmdIn(b, OpDestroyEQ)
	require.NoError(t, err)
	assert.Equal(t, uint32(0x14), in.ID)
}

// The EQEs firmware writes, byte by byte (struct mlx5_eqe: type at byte
// 1, sub_type at byte 3, the event data from byte 32, the owner bit in
// byte 63), and what the accessors read back.
func TestEQEImages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		e     EQE
		dump  string
		cqn   uint32
		obj   uint32
		port  uint8
		affil bool
	}{
		{"COMP of CQ 0x1a2b3, owner 1", func() EQE { e := CompEQE(0x1a2b3); e.Owner = 1; return e }(),
			"0030: 00000000 00000000 0001a2b3 00000001", 0x1a2b3, 0, 0, true},
		{"CQ_ERROR overrun of CQ 0x400", CQErrorEQE(0x400, CQErrorOverrun),
			"0000: 00040000 00000000 00000000 00000000\n0020: 00000400 00000000 00000001 00000000", 0x400, 0, 0, true},
		{"WQ_ACCESS_ERROR of QP 0x105", QPEventEQE(EventWQAccessError, 0x105),
			"0000: 00110000 00000000 00000000 00000000\n0030: 00000000 00000000 00000105 00000000", 0, 0x105, 0, true},
		{"SRQ_RQ_LIMIT of RMP 7", SRQEventEQE(EventSRQRQLimit, 7),
			"0000: 00140000 00000000 00000000 00000000\n0030: 00000000 01000000 00000007 00000000", 0, 7, 0, true},
		{"PORT_CHANGE port 1 down", PortChangeEQE(1, PortChangeDown),
			"0000: 00090001 00000000 00000000 00000000\n0020: 00000000 00000000 10000000 00000000", 0, 0, 1, false},
		{"INTERNAL_ERROR", InternalErrorEQE(), "0000: 00080000 00000000 00000000 00000000", 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, EQESize)
			require.NoError(t, tc.e.Encode(b))
			require.Equal(t, parseDump(t, EQESize, tc.dump), b)
			d, err := DecodeEQE(b)
			require.NoError(t, err)
			assert.Equal(t, tc.e, d)
			assert.Equal(t, tc.cqn, d.CQN())
			assert.Equal(t, tc.obj, d.ObjNum())
			assert.Equal(t, tc.port, d.Port())
			n, affil := d.AffiliatedObj()
			assert.Equal(t, tc.affil, affil)
			assert.Equal(t, tc.cqn|tc.obj, n)
		})
	}
	e := CQErrorEQE(9, CQErrorAccessViolation)
	assert.Equal(t, CQErrorAccessViolation, e.CQErrorSyndrome())
	assert.Equal(t, "CQ_ERROR", EventCQError.String())
	assert.Equal(t, "EVENT_0x3f", EventType(0x3f).String())
}

// Owner bits: firmware writes 0 on the first pass of the ring, 1 on the
// second; software owns an entry whose bit matches its pass. A fresh ring
// (EQEOwnerInit) is hardware-owned.
func TestEQEOwnership(t *testing.T) {
	const log = 2
	assert.False(t, EQEOwned(EQEOwnerInit, 0, log))
	for pc := uint32(0); pc < 16; pc++ {
		assert.True(t, EQEOwned(EQEOwnerBit(pc, log), pc, log), "entry %d as written", pc)
		assert.False(t, EQEOwned(EQEOwnerBit(pc, log), pc+1<<log, log), "entry %d seen a pass later", pc)
	}
	assert.Equal(t, uint64(1<<4|1<<0x14), EventMask(EventCQError, EventSRQRQLimit, EventType(64)))
	assert.Equal(t, uint32(0x14000123), EQDoorbell(0x14, 0x1000123))
}

// FuzzDecodeEQE: any 64 bytes decode (an EQE comes from the kernel), the
// accessors never fail, and encoding gives back every byte a field holds.
func FuzzDecodeEQE(f *testing.F) {
	seed := make([]byte, EQESize)
	_ = CompEQE(0x42).Encode(seed)
	f.Add(seed)
	f.Add(make([]byte, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEQE(b)
		if len(b) < EQESize {
			if err == nil {
				t.Fatal("short EQE decoded")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		_, _ = e.AffiliatedObj()
		_ = e.CQErrorSyndrome()
		_ = e.Port()
		enc := make([]byte, EQESize)
		if err := e.Encode(enc); err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEQE(enc)
		if err != nil || back != e {
			t.Fatalf("re-decoded %+v, want %+v (%v)", back, e, err)
		}
	})
}
