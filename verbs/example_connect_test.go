package verbs_test

import (
	"bytes"
	"fmt"

	"github.com/gdaki/gpunetio/verbs"
)

// ExampleQP_ConnectRC connects a QP on emu0 to one on emu1 the way two
// programs do: each describes its QP and buffer (LocalEndpoint, MR.Region),
// sends that in the DOCA examples' wire format, reads the peer's, and
// connects in one call with the DOCA defaults. Then emu0 writes into the
// region emu1 sent.
func ExampleQP_ConnectRC() {
	a, b, done, err := openSides()
	defer done()
	if err != nil {
		fmt.Println(err)
		return
	}
	la, err := a.qp.LocalEndpoint(1, 0) // port 1, GID index 0
	if err != nil {
		fmt.Println(err)
		return
	}
	lb, err := b.qp.LocalEndpoint(1, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	la.Regions = []verbs.Region{a.mr.Region()}
	lb.Regions = []verbs.Region{b.mr.Region()}

	// The two directions of a TCP connection (ExchangeEndpointDOCA does
	// both steps on a net.Conn).
	var toA, toB bytes.Buffer
	if err := verbs.WriteEndpointDOCA(&toB, la.Endpoint); err != nil {
		fmt.Println(err)
		return
	}
	if err := verbs.WriteEndpointDOCA(&toA, lb.Endpoint); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("bytes on the wire:", toB.Len())
	remoteOfA, err := verbs.ReadEndpointDOCA(&toA, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	remoteOfB, err := verbs.ReadEndpointDOCA(&toB, 1)
	if err != nil {
		fmt.Println(err)
		return
	}

	if err := a.qp.ConnectRC(la, remoteOfA, nil); err != nil {
		fmt.Println(err)
		return
	}
	// Overrides are optional pointers: nil keeps the default.
	if err := b.qp.ConnectRC(lb, remoteOfB, &verbs.ConnectOptions{AckTimeout: verbs.Ptr[uint8](18)}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.qp.State(), b.qp.State())

	// Write into the region b sent, 64 bytes in (Example shows the
	// PostSend and PollWait that write does).
	msg := "hello, ConnectRC"
	if err := a.write(msg, remoteOfA.Regions[0], 64); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b.buf[64 : 64+len(msg)]))
	// Output:
	// bytes on the wire: 36
	// RTS RTS
	// hello, ConnectRC
}

// ExampleEndpoint_MarshalDOCA shows what the DOCA wire format can and cannot
// carry.
func ExampleEndpoint_MarshalDOCA() {
	ep := verbs.Endpoint{QPN: 0x1c5, LID: 7, Regions: []verbs.Region{{Addr: 0x7f0000200000, Length: 4096, RKey: 0x2a}}}
	b, err := ep.MarshalDOCA()
	fmt.Println(len(b), err)
	back, _ := verbs.UnmarshalEndpointDOCA(b, 1)
	fmt.Println(back.MTU, back.PSN, back.Regions[0].Length)

	ep.PSN = 0x1234 // a DOCA peer would start at PSN 0: refused, not dropped
	_, err = ep.MarshalDOCA()
	fmt.Println(err)
	// Output:
	// 36 <nil>
	// 4096 0 0
	// Endpoint.MarshalDOCA: DOCA_ERROR_INVALID_VALUE: PSN 0x1234: the DOCA format carries no PSN and a DOCA peer expects 0
}
