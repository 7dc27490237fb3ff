package wire_test

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5/emu/wire"
)

// Two ports of one process: Send calls the destination's handler directly.
func ExamplePort_Send() {
	a, err := wire.Listen(wire.Config{})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := wire.Listen(wire.Config{Handler: func(f *wire.Frame) {
		// f is valid only during the call: copy what you keep.
		fmt.Printf("%s to QP %#x, PSN %d: %q at %#x rkey %#x\n",
			f.Opcode, f.DstQPN, f.PSN, f.Payload, f.RETH.VA, f.RETH.RKey)
	}})
	if err != nil {
		panic(err)
	}
	defer b.Close()

	err = a.Send(&wire.Frame{
		Opcode: wire.OpWriteOnly, AckReq: true,
		SrcGID: a.GID(), DstGID: b.GID(), SrcQPN: 0x10, DstQPN: 0x20, PSN: 1,
		RETH:    wire.RETH{VA: 0x1000, RKey: 0x42, DMALength: 5},
		Payload: []byte("hello"),
	})
	fmt.Println("send:", err)
	// Output:
	// RDMA_WRITE_ONLY to QP 0x20, PSN 1: "hello" at 0x1000 rkey 0x42
	// send: <nil>
}

// Encoding and decoding a NAK.
func ExampleDecode() {
	nak := wire.Frame{Opcode: wire.OpAck, PSN: 7, AETH: wire.AETH{Syndrome: wire.NakSyndrome(wire.NakRemoteAccess), MSN: 3}}
	b := nak.AppendEncode(nil)
	f, err := wire.Decode(b)
	fmt.Println(len(b), f.Opcode, f.PSN, f.AETH.Syndrome, f.AETH.MSN, err)
	// Output: 64 ACKNOWLEDGE 7 NAK(REMOTE_ACCESS_ERROR) 3 <nil>
}
