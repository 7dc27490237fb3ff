package common

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/verbs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unhex decodes a hex vector written one field per line; everything after
// '#' on a line is a comment.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	require.NoError(t, err)
	return b
}

// docaRecord is one side's record as the DOCA C++ examples put it on the
// wire, split into the fields they send one at a time: the regions, then
// QPN, GID and LID. Written by hand from the reference's field list.
type docaRecord struct {
	regions, qpn, gid, lid string
}

func (r docaRecord) fields(t *testing.T) [][]byte {
	return [][]byte{unhex(t, r.regions), unhex(t, r.qpn), unhex(t, r.gid), unhex(t, r.lid)}
}

func (r docaRecord) all(t *testing.T) []byte {
	var b []byte
	for _, f := range r.fields(t) {
		b = append(b, f...)
	}
	return b
}

// A server with two remote-writable buffers on RoCE (LID 0).
var serverRecord = docaRecord{
	regions: `
		00 00 20 00 7f 7e 00 00   # buffer 0 address 0x00007e7f00200000
		78 56 34 12               # buffer 0 rkey    0x12345678
		00 10 40 00 7f 7e 00 00   # buffer 1 address 0x00007e7f00401000
		ef be ad de               # buffer 1 rkey    0xdeadbeef`,
	qpn: `a5 0c 01 00             # QPN 0x010ca5`,
	gid: `00 00 00 00 00 00 00 00 00 00 ff ff c0 a8 01 07   # ::ffff:192.168.1.7`,
	lid: `00 00 00 00             # LID 0, four bytes`,
}

var serverEndpoint = verbs.Endpoint{
	Regions: []verbs.Region{{Addr: 0x00007e7f00200000, RKey: 0x12345678}, {Addr: 0x00007e7f00401000, RKey: 0xdeadbeef}},
	QPN:     0x010ca5,
	GID:     verbs.GID{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 1, 15: 7},
	MTU:     verbs.EndpointDOCAMTU,
}

// A BW client (no buffers) on InfiniBand: its LID goes out as four bytes.
var clientRecord = docaRecord{
	qpn: `11 00 00 00             # QPN 0x000011`,
	gid: `fe 80 00 00 00 00 00 00 02 02 c9 ff fe 00 00 01   # fe80::202:c9ff:fe00:1`,
	lid: `34 12 00 00             # LID 0x1234 (the two-byte form breaks DOCA peers)`,
}

var clientEndpoint = verbs.Endpoint{
	QPN: 0x11,
	GID: verbs.GID{0xfe, 0x80, 8: 0x02, 9: 0x02, 10: 0xc9, 11: 0xff, 12: 0xfe, 15: 1},
	LID: 0x1234,
	MTU: verbs.EndpointDOCAMTU,
}

// referencePeer plays the DOCA example's side of the exchange on c: for
// each field in turn, the server sends its part and then receives the
// peer's, the client receives first. It returns what it received.
func referencePeer(c net.Conn, server bool, send [][]byte, recvSizes []int) ([]byte, error) {
	var got []byte
	for i := range send {
		in := make([]byte, recvSizes[i])
		steps := []func() error{
			func() error { _, err := c.Write(send[i]); return err },
			func() error { _, err := io.ReadFull(c, in); return err },
		}
		if !server {
			steps[0], steps[1] = steps[1], steps[0]
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return got, err
			}
		}
		got = append(got, in...)
	}
	return got, nil
}

// TestExchangeAgainstReference runs the examples' exchange against a peer
// that sends and receives exactly as the DOCA C++ examples do, in both
// roles: the bytes the example sends are the reference's, field for field
// (LID as four bytes), and it decodes the reference's bytes.
func TestExchangeAgainstReference(t *testing.T) {
	for _, tc := range []struct {
		name           string
		refServer      bool
		ours, theirs   verbs.Endpoint
		oursRec, ref   docaRecord
		theirRegions   int
		ourRegionCount int
	}{
		{"Go client, DOCA server", true, clientEndpoint, serverEndpoint, clientRecord, serverRecord, 2, 0},
		{"Go server, DOCA client", false, serverEndpoint, clientEndpoint, serverRecord, clientRecord, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tcpPair(t)
			want := tc.oursRec.fields(t)
			sizes := []int{len(want[0]), len(want[1]), len(want[2]), len(want[3])}
			type res struct {
				got []byte
				err error
			}
			ch := make(chan res, 1)
			go func() {
				got, err := referencePeer(b, tc.refServer, tc.ref.fields(t), sizes)
				ch <- res{got, err}
			}()
			peer, err := Exchange(a, tc.ours, tc.theirRegions, 5*time.Second)
			require.NoError(t, err)
			r := <-ch
			require.NoError(t, r.err)
			assert.Equal(t, tc.oursRec.all(t), r.got, "the bytes the reference receives")
			assert.Len(t, r.got, verbs.EndpointDOCASize(tc.ourRegionCount))
			assert.Equal(t, tc.theirs, peer)
		})
	}
}

// Two Go peers exchange records and the completion record over TCP.
func TestExchangeLoopback(t *testing.T) {
	l, port := listenAny(t)
	type res struct {
		ep   verbs.Endpoint
		done Done
		err  error
	}
	srvCh := make(chan res, 1)
	go func() {
		c, err := Accept(context.Background(), l, 5*time.Second)
		if err != nil {
			srvCh <- res{err: err}
			return
		}
		defer c.Close()
		ep, err := Exchange(c, serverEndpoint, 0, 5*time.Second)
		if err != nil {
			srvCh <- res{err: err}
			return
		}
		d, err := WaitDone(context.Background(), c, 5*time.Second)
		srvCh <- res{ep, d, err}
	}()
	c, err := Dial(context.Background(), "127.0.0.1", port, 5*time.Second)
	require.NoError(t, err)
	got, err := Exchange(c, clientEndpoint, 2, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, serverEndpoint, got)
	require.NoError(t, SendDone(c, Done{ErrorCQEs: 3}, time.Second))
	require.NoError(t, c.Close())
	r := <-srvCh
	require.NoError(t, r.err)
	assert.Equal(t, clientEndpoint, r.ep)
	assert.Equal(t, Done{Reported: true, ErrorCQEs: 3}, r.done)
}

func TestExchangeFailures(t *testing.T) {
	// The peer sends a truncated record and closes.
	a, b := tcpPair(t)
	go func(b net.Conn) {
		io.ReadFull(b, make([]byte, verbs.EndpointDOCASize(0)))
		b.Write([]byte{1, 2, 3})
		b.Close()
	}(b)
	_, err := Exchange(a, clientEndpoint, 0, 5*time.Second)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorIs(t, err, verbs.ErrConnectionAborted)
	assert.ErrorContains(t, err, "oob: exchange endpoints")

	// The peer never answers.
	a, _ = tcpPair(t)
	start := time.Now()
	_, err = Exchange(a, clientEndpoint, 0, 50*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.ErrorIs(t, err, verbs.ErrTimeOut)
	assert.Less(t, time.Since(start), 5*time.Second)

	// The peer's record names QP 0; ours is not sent when it is invalid.
	a, b = tcpPair(t)
	go func(b net.Conn) { b.Write(make([]byte, verbs.EndpointDOCASize(0))) }(b)
	_, err = Exchange(a, clientEndpoint, 0, 5*time.Second)
	assert.ErrorIs(t, err, verbs.ErrInvalidValue)
	_, err = Exchange(a, verbs.Endpoint{}, 0, time.Second)
	assert.ErrorIs(t, err, verbs.ErrInvalidValue)
	bad := clientEndpoint
	bad.PSN = 5 // the DOCA format has no PSN: refused rather than dropped
	_, err = Exchange(a, bad, 0, time.Second)
	assert.ErrorIs(t, err, verbs.ErrInvalidValue)
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded))
}

// TestWireFormatDOCA30 checks the records the examples send against golden
// bytes of DOCA GPUNetIO 3.0's verbs examples, whose out-of-band format is
// that of 2.0.1: put_bw's server (its 16 buffers, one per message size,
// 216 bytes), a bandwidth client (no buffers, 24 bytes) and a write_lat
// side (its 10 poll buffers, 144 bytes). The golden file was written by an
// encoder of its own, from the examples' field list.
func TestWireFormatDOCA30(t *testing.T) {
	b, err := os.ReadFile("testdata/doca30_records.txt")
	require.NoError(t, err)
	golden := map[string][]byte{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, h, ok := strings.Cut(line, " ")
		require.True(t, ok, line)
		golden[name], err = hex.DecodeString(h)
		require.NoError(t, err)
	}
	regions := func(n int, base uint64, rkey uint32) []verbs.Region {
		r := make([]verbs.Region, n)
		for i := range r {
			r[i] = verbs.Region{Addr: base + uint64(i)*0x100000, RKey: rkey + uint32(i)}
		}
		return r
	}
	roce := verbs.GID{10: 0xff, 11: 0xff, 12: 10, 15: 7}
	for _, tc := range []struct {
		name string
		ep   verbs.Endpoint
		size int
	}{
		{"put_bw_server", verbs.Endpoint{Regions: regions(len(BWSizes), 0x7f3a00000000, 0x2000), QPN: 0xbd01, GID: roce}, 216},
		{"bw_client", verbs.Endpoint{QPN: 0xbd02, GID: clientEndpoint.GID, LID: 0x17}, 24},
		{"write_lat", verbs.Endpoint{Regions: regions(len(LatSizes), 0x7f3b00000000, 0x3000), QPN: 0xbd03, GID: roce}, 144},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ep.MarshalDOCA()
			require.NoError(t, err)
			require.Len(t, golden[tc.name], tc.size)
			assert.Equal(t, golden[tc.name], got, "the bytes DOCA 3.0's examples exchange")
			back, err := verbs.UnmarshalEndpointDOCA(golden[tc.name], len(tc.ep.Regions))
			require.NoError(t, err)
			want := tc.ep
			want.MTU = verbs.EndpointDOCAMTU
			assert.Equal(t, want, back)
		})
	}
}
