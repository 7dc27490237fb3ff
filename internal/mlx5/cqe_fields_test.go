package mlx5

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// encode62 stores the fields at fixed byte offsets; the field table is the
// layout's definition. For random CQEs, normal and error, its bytes must be
// those that Set writes through the table.
func TestCQEEncodeFields(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		c := CQE{
			WQEID: uint16(rng.Uint32()), MLPath: uint8(rng.Uint32()), SLID: uint16(rng.Uint32()),
			FlagsRQPN: rng.Uint32(), HdsIPExt: uint8(rng.Uint32()), L4HdrTypeEtc: uint8(rng.Uint32()),
			VLANInfo: uint16(rng.Uint32()), SRQNUIdx: rng.Uint32(), ImmInvalPKey: rng.Uint32(),
			App: uint8(rng.Uint32()), AppOp: uint8(rng.Uint32()), AppInfo: uint16(rng.Uint32()),
			ByteCnt: rng.Uint32(), Timestamp: rng.Uint64(), HWErrSynd: uint8(rng.Uint32()),
			HWSyndType: uint8(rng.Uint32()), VendorSyndrome: uint8(rng.Uint32()), Syndrome: Syndrome(rng.Uint32()),
			WQEOpcode: WQEOpcode(rng.Uint32()), QPN: rng.Uint32(), WQECounter: uint16(rng.Uint32()),
			Signature: uint8(rng.Uint32()), Opcode: CQEOpcode(rng.Intn(16)), Format: uint8(rng.Intn(4)),
			Solicited: rng.Intn(2) == 1, Owner: uint8(rng.Intn(2)),
		}
		want := make([]byte, CQESize)
		for _, f := range []struct {
			f Field
			v uint64
		}{
			{cqeWQEID, uint64(c.WQEID)}, {cqeMLPath, uint64(c.MLPath)}, {cqeSLID, uint64(c.SLID)},
			{cqeFlagsRQPN, uint64(c.FlagsRQPN)}, {cqeHdsIPExt, uint64(c.HdsIPExt)}, {cqeL4HdrTypeEtc, uint64(c.L4HdrTypeEtc)},
			{cqeVLANInfo, uint64(c.VLANInfo)}, {cqeSRQNUIdx, uint64(c.SRQNUIdx)}, {cqeImmInvalPKey, uint64(c.ImmInvalPKey)},
			{cqeApp, uint64(c.App)}, {cqeAppOp, uint64(c.AppOp)}, {cqeAppInfo, uint64(c.AppInfo)},
			{cqeByteCnt, uint64(c.ByteCnt)}, {cqeWQEOpcode, uint64(c.WQEOpcode)}, {cqeQPN, uint64(c.QPN) & cqeQPN.Max()},
			{cqeWQECounter, uint64(c.WQECounter)}, {cqeSignature, uint64(c.Signature)},
		} {
			Set(want, f.f, f.v)
		}
		if (c.Opcode & 0xf).IsError() {
			Set(want, cqeTimestampHi, c.Timestamp>>32)
			Set(want, cqeHWErrSynd, uint64(c.HWErrSynd))
			Set(want, cqeHWSyndType, uint64(c.HWSyndType))
			Set(want, cqeVendorSynd, uint64(c.VendorSyndrome))
			Set(want, cqeSyndrome, uint64(c.Syndrome))
		} else {
			Set(want, cqeTimestamp, c.Timestamp)
		}
		Set(want, cqeOpcode, uint64(c.Opcode&0xf))
		Set(want, cqeFormat, uint64(c.Format&3))
		SetBool(want, cqeSolicited, c.Solicited)
		Set(want, cqeOwner, uint64(c.Owner&1))
		got := bytes.Repeat([]byte{0xa5}, CQESize) // every byte must be written
		if err := c.Encode(got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("CQE %+v:\n got %x\nwant %x", c, got, want)
		}
	}
}

// BenchmarkCQEEncode is the engine's cost of a completion's bytes.
func BenchmarkCQEEncode(b *testing.B) {
	c := CQE{Opcode: CQEReq, ByteCnt: 64, Timestamp: 12345, WQEOpcode: WQEOpRDMAWrite, QPN: 0x100}
	var buf [CQESize]byte
	for i := 0; i < b.N; i++ {
		c.WQECounter = uint16(i)
		if err := c.Encode(buf[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// refDecodeCQE is DecodeCQE written field by field through Get over the
// CQE table: the definition DecodeCQE's word reads must match.
func refDecodeCQE(b []byte) CQE {
	c := CQE{
		WQEID:        uint16(Get32(b, cqeWQEID)),
		MLPath:       uint8(Get32(b, cqeMLPath)),
		SLID:         uint16(Get32(b, cqeSLID)),
		FlagsRQPN:    Get32(b, cqeFlagsRQPN),
		HdsIPExt:     uint8(Get32(b, cqeHdsIPExt)),
		L4HdrTypeEtc: uint8(Get32(b, cqeL4HdrTypeEtc)),
		VLANInfo:     uint16(Get32(b, cqeVLANInfo)),
		SRQNUIdx:     Get32(b, cqeSRQNUIdx),
		ImmInvalPKey: Get32(b, cqeImmInvalPKey),
		App:          uint8(Get32(b, cqeApp)),
		AppOp:        uint8(Get32(b, cqeAppOp)),
		AppInfo:      uint16(Get32(b, cqeAppInfo)),
		ByteCnt:      Get32(b, cqeByteCnt),
		WQEOpcode:    WQEOpcode(Get32(b, cqeWQEOpcode)),
		QPN:          Get32(b, cqeQPN),
		WQECounter:   uint16(Get32(b, cqeWQECounter)),
		Signature:    uint8(Get32(b, cqeSignature)),
		Opcode:       CQEOpcode(Get32(b, cqeOpcode)),
		Format:       uint8(Get32(b, cqeFormat)),
		Solicited:    GetBool(b, cqeSolicited),
		Owner:        uint8(Get32(b, cqeOwner)),
	}
	if c.Opcode.IsError() {
		c.Timestamp = Get(b, cqeTimestampHi) << 32
		c.HWErrSynd = uint8(Get32(b, cqeHWErrSynd))
		c.HWSyndType = uint8(Get32(b, cqeHWSyndType))
		c.VendorSyndrome = uint8(Get32(b, cqeVendorSynd))
		c.Syndrome = Syndrome(Get32(b, cqeSyndrome))
	} else {
		c.Timestamp = Get(b, cqeTimestamp)
	}
	return c
}

// DecodeCQE reads its fields at the byte offsets the table gives them, for
// every opcode (so both views), every single bit and random bytes.
func TestDecodeCQEFields(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var bufs [][]byte
	for op := 0; op < 16; op++ {
		for bit := 0; bit < 8*(CQESize-1); bit++ {
			b := make([]byte, CQESize)
			b[bit/8] = 0x80 >> (bit % 8)
			b[63] = byte(op) << 4
			bufs = append(bufs, b)
		}
		for _, v := range []byte{0x00, 0xff} {
			b := bytes.Repeat([]byte{v}, CQESize)
			b[63] = byte(op)<<4 | v&0xf
			bufs = append(bufs, b)
		}
	}
	for i := 0; i < 10000; i++ {
		b := make([]byte, CQESize+rng.Intn(3))
		rng.Read(b)
		if i%2 == 0 { // half of them in the error view
			b[63] = b[63]&0x0f | []byte{0xd0, 0xe0}[rng.Intn(2)]
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		got, err := DecodeCQE(b)
		require.NoError(t, err)
		if want := refDecodeCQE(b[:CQESize]); got != want {
			t.Fatalf("bytes %x:\n got %+v\nwant %+v", b, got, want)
		}
	}
}
