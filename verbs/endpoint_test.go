package verbs

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unhex decodes a hex vector written one field per line; everything after
// '#' on a line is a comment.
func unhex(t testing.TB, s string) []byte {
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

// A put_bw / write_bw server record with two of its regions: per region the
// buffer address (uint64) and the MR rkey (uint32), then QPN (uint32), the
// GID (16 raw bytes) and the LID (the C int, 4 bytes), all host order
// (little-endian), no framing. Written by hand from the DOCA examples' field
// list, not produced by the encoder.
const docaServerVector = `
00 00 20 00 7f 7e 00 00   # region 0 address 0x00007e7f00200000
78 56 34 12               # region 0 rkey    0x12345678
00 10 40 00 7f 7e 00 00   # region 1 address 0x00007e7f00401000
ef be ad de               # region 1 rkey    0xdeadbeef
a5 0c 01 00               # QPN 0x010ca5
00 00 00 00 00 00 00 00   # GID ::ffff:192.168.1.7, network order
00 00 ff ff c0 a8 01 07
00 00 00 00               # LID 0 (RoCE), four bytes
`

// The BW client sends no regions; on InfiniBand its LID is the port LID.
const docaClientVector = `
11 00 00 00               # QPN 0x000011
fe 80 00 00 00 00 00 00   # GID fe80::0202:c9ff:fe00:0001
02 02 c9 ff fe 00 00 01
34 12 00 00               # LID 0x1234, four bytes (the 2-byte form breaks DOCA peers)
`

func docaServerEndpoint() Endpoint {
	return Endpoint{
		Regions: []Region{{Addr: 0x00007e7f00200000, RKey: 0x12345678}, {Addr: 0x00007e7f00401000, RKey: 0xdeadbeef}},
		QPN:     0x010ca5,
		GID:     GID{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 1, 15: 7},
		MTU:     EndpointDOCAMTU,
	}
}

func docaClientEndpoint() Endpoint {
	return Endpoint{QPN: 0x11, GID: GID{0xfe, 0x80, 8: 0x02, 9: 0x02, 10: 0xc9, 11: 0xff, 12: 0xfe, 15: 1}, LID: 0x1234, MTU: EndpointDOCAMTU}
}

func TestEndpointDOCAGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vector  string
		ep      Endpoint
		regions int
	}{
		{"server", docaServerVector, docaServerEndpoint(), 2},
		{"client", docaClientVector, docaClientEndpoint(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.vector)
			require.Len(t, want, EndpointDOCASize(tc.regions))
			got, err := tc.ep.MarshalDOCA()
			require.NoError(t, err)
			assert.Equal(t, want, got)

			dec, err := UnmarshalEndpointDOCA(want, tc.regions)
			require.NoError(t, err)
			assert.Equal(t, tc.ep, dec)
			assert.Equal(t, uint32(0), dec.PSN, "a DOCA peer starts at PSN 0")
			assert.Equal(t, 4096, dec.MTU, "a DOCA peer uses a 4096-byte path MTU")
		})
	}
}

func TestEndpointDOCAFixedValues(t *testing.T) {
	e := docaServerEndpoint()
	e.Regions[0].Length = 1 << 20
	e.MTU = 0
	b, err := e.MarshalDOCA()
	require.NoError(t, err, "MTU 0 means DOCA's 4096; lengths are not sent")
	dec, err := UnmarshalEndpointDOCA(b, 2)
	require.NoError(t, err)
	assert.Zero(t, dec.Regions[0].Length, "length unknown")

	e.PSN = 0x42
	_, err = e.MarshalDOCA()
	assert.ErrorIs(t, err, ErrInvalidValue)
	assert.ErrorContains(t, err, "PSN 0x42: the DOCA format carries no PSN")

	e.PSN = 0
	for _, mtu := range []int{256, 1024, 2048} {
		e.MTU = mtu
		_, err = e.MarshalDOCA()
		assert.ErrorIs(t, err, ErrInvalidValue)
		assert.ErrorContains(t, err, "the DOCA format carries no MTU")
	}
}

func TestEndpointDOCARejects(t *testing.T) {
	good := unhex(t, docaClientVector)
	qpn := func(v uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b, v)
		return b
	}
	lid := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(lid[20:], 0x10000)
	for _, tc := range []struct {
		name    string
		b       []byte
		regions int
		code    Code
		msg     string
	}{
		{"short", good[:23], 0, ErrInvalidValue, "23 bytes: 0 regions take 24"},
		{"long", append(append([]byte(nil), good...), 0), 0, ErrInvalidValue, "25 bytes"},
		{"wrong region count", good, 1, ErrInvalidValue, "1 regions take 36"},
		{"negative regions", good, -1, ErrInvalidValue, "-1 regions"},
		{"too many regions", good, MaxEndpointRegions + 1, ErrInvalidValue, "1025 regions"},
		{"QPN 0", qpn(0), 0, ErrInvalidValue, "QPN 0x0"},
		{"QPN over 24 bits", qpn(1 << 24), 0, ErrInvalidValue, "QPN 0x1000000"},
		{"LID over 16 bits", lid, 0, ErrInvalidValue, "LID 0x10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := UnmarshalEndpointDOCA(tc.b, tc.regions)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.code)
			assert.ErrorContains(t, err, "UnmarshalEndpointDOCA")
			assert.ErrorContains(t, err, tc.msg)
		})
	}
	_, err := Endpoint{QPN: 1, Regions: make([]Region, MaxEndpointRegions+1)}.MarshalDOCA()
	assert.ErrorIs(t, err, ErrTooBig)
	_, err = Endpoint{}.MarshalDOCA()
	assert.ErrorContains(t, err, "QPN 0x0")
}

// The self-describing encoding, version 1, by hand.
const endpointVector = `
47 44 45 50               # magic "GDEP"
01 00                     # version 1
01 00                     # one region
a5 0c 01 00               # QPN 0x010ca5
56 34 12 00               # PSN 0x123456
00 04 00 00               # MTU 1024 bytes
07 00 00 00               # LID 7
00 00 00 00 00 00 00 00   # GID ::ffff:10.0.0.2
00 00 ff ff 0a 00 00 02
00 00 20 00 7f 7e 00 00   # region 0 address 0x00007e7f00200000
00 00 10 00 00 00 00 00   # region 0 length  1 MiB
78 56 34 12               # region 0 rkey    0x12345678
`

func TestEndpointBinaryGolden(t *testing.T) {
	want := unhex(t, endpointVector)
	ep := Endpoint{QPN: 0x010ca5, PSN: 0x123456, MTU: 1024, LID: 7,
		GID:     GID{10: 0xff, 11: 0xff, 12: 10, 15: 2},
		Regions: []Region{{Addr: 0x00007e7f00200000, Length: 1 << 20, RKey: 0x12345678}}}
	got, err := ep.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Len(t, got, EndpointSize(1))
	var dec Endpoint
	require.NoError(t, dec.UnmarshalBinary(want))
	assert.Equal(t, ep, dec)

	// Every field survives, zero values included.
	for _, e := range []Endpoint{{QPN: 1}, {QPN: 0xffffff, PSN: 0xffffff, MTU: 4096, LID: 0xffff, GID: GID{0xff, 15: 0xff},
		Regions: make([]Region, MaxEndpointRegions)}} {
		b, err := e.MarshalBinary()
		require.NoError(t, err)
		var d Endpoint
		require.NoError(t, d.UnmarshalBinary(b))
		if len(e.Regions) == 0 {
			e.Regions = nil
		}
		assert.Equal(t, e, d)
	}
}

func TestEndpointBinaryRejects(t *testing.T) {
	good := unhex(t, endpointVector)
	mod := func(off int, v ...byte) []byte {
		b := append([]byte(nil), good...)
		copy(b[off:], v)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		code Code
		msg  string
	}{
		{"empty", nil, ErrInvalidValue, "shorter than the 40-byte header"},
		{"header only", good[:40], ErrInvalidValue, "40 bytes: an endpoint with 1 regions takes 60"},
		{"trailing byte", append(append([]byte(nil), good...), 0), ErrInvalidValue, "61 bytes"},
		{"bad magic", mod(0, 'G', 'D', 'E', 'Q'), ErrInvalidValue, "bad magic"},
		{"DOCA bytes", unhex(t, docaServerVector), ErrInvalidValue, "bad magic"},
		{"version 2", mod(4, 2, 0), ErrUnsupportedVersion, "version 2"},
		{"too many regions", mod(6, 0x01, 0x04), ErrTooBig, "1025 regions"},
		{"QPN 0", mod(8, 0, 0, 0, 0), ErrInvalidValue, "QPN 0x0"},
		{"PSN over 24 bits", mod(12, 0, 0, 0, 1), ErrInvalidValue, "PSN 0x1000000"},
		{"MTU 1500", mod(16, 0xdc, 0x05), ErrInvalidValue, "MTU 1500"},
		{"LID over 16 bits", mod(20, 0, 0, 1), ErrInvalidValue, "LID 0x10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Endpoint{QPN: 99}
			err := e.UnmarshalBinary(tc.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.code)
			assert.ErrorContains(t, err, "Endpoint.UnmarshalBinary")
			assert.ErrorContains(t, err, tc.msg)
			assert.Equal(t, Endpoint{QPN: 99}, e, "a failed decode leaves the endpoint alone")
		})
	}
	_, err := Endpoint{QPN: 1, MTU: 8192}.MarshalBinary()
	assert.ErrorContains(t, err, "MTU 8192")
}

func TestReadWriteEndpoint(t *testing.T) {
	a := Endpoint{QPN: 5, PSN: 9, MTU: 2048, Regions: []Region{{Addr: 1, Length: 2, RKey: 3}}}
	b := Endpoint{QPN: 6}
	var buf bytes.Buffer
	require.NoError(t, WriteEndpoint(&buf, a))
	require.NoError(t, WriteEndpoint(&buf, b))
	buf.WriteString("rest")
	got, err := ReadEndpoint(&buf)
	require.NoError(t, err)
	assert.Equal(t, a, got)
	got, err = ReadEndpoint(&buf)
	require.NoError(t, err)
	assert.Equal(t, b, got)
	assert.Equal(t, "rest", buf.String(), "nothing after an endpoint is consumed")

	buf.Reset()
	require.NoError(t, WriteEndpointDOCA(&buf, docaServerEndpoint()))
	buf.WriteString("rest")
	got, err = ReadEndpointDOCA(&buf, 2)
	require.NoError(t, err)
	assert.Equal(t, docaServerEndpoint(), got)
	assert.Equal(t, "rest", buf.String())

	// Ends of stream.
	_, err = ReadEndpoint(bytes.NewReader(nil))
	assert.ErrorIs(t, err, ErrConnectionAborted)
	assert.ErrorIs(t, err, io.EOF)
	full, _ := a.MarshalBinary()
	_, err = ReadEndpoint(bytes.NewReader(full[:50]))
	assert.ErrorIs(t, err, ErrConnectionAborted)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorContains(t, err, "read 10 of 20 bytes")
	_, err = ReadEndpointDOCA(bytes.NewReader(unhex(t, docaServerVector)[:30]), 2)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = ReadEndpointDOCA(&buf, MaxEndpointRegions+1)
	assert.ErrorIs(t, err, ErrInvalidValue)

	// A header that announces more regions than allowed is refused before
	// anything else is read.
	hdr := append([]byte(nil), full[:40]...)
	binary.LittleEndian.PutUint16(hdr[6:], 0xffff)
	r := bytes.NewReader(append(hdr, make([]byte, 100)...))
	_, err = ReadEndpoint(r)
	assert.ErrorIs(t, err, ErrTooBig)
	assert.Equal(t, 100, r.Len())

	// Writers that fail.
	err = WriteEndpoint(failWriter{}, a)
	assert.ErrorIs(t, err, ErrConnectionAborted)
	assert.ErrorIs(t, err, errBroken)
	err = WriteEndpointDOCA(shortWriter{}, docaClientEndpoint())
	assert.ErrorIs(t, err, io.ErrShortWrite)
	assert.ErrorContains(t, err, "wrote 1 of 24 bytes")
	assert.ErrorIs(t, WriteEndpointDOCA(&buf, Endpoint{QPN: 1, PSN: 1}), ErrInvalidValue, "nothing is written")

	// Deadlines become ErrTimeOut.
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	require.NoError(t, c1.SetDeadline(time.Now().Add(-time.Second)))
	_, err = ReadEndpoint(c1)
	assert.ErrorIs(t, err, ErrTimeOut)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	err = WriteEndpoint(c1, a)
	assert.ErrorIs(t, err, ErrTimeOut)
}

var errBroken = errors.New("broken pipe for the test")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBroken }

type shortWriter struct{}

func (shortWriter) Write([]byte) (int, error) { return 1, nil }

// docaPeer plays a DOCA example's side of the out-of-band exchange with its
// exact call sequence: regions one send per field (the server sends first
// in the BW tests; in write_lat the server sends then receives and the
// client receives then sends), then QPN, GID and LID, each sent and then
// received.
func docaPeer(c net.Conn, ep Endpoint, sendRegions bool, recvRegions int, recvFirst bool) (Endpoint, error) {
	le := binary.LittleEndian
	send := func(b []byte) error { _, err := c.Write(b); return err }
	recv := func(n int) ([]byte, error) {
		b := make([]byte, n)
		_, err := io.ReadFull(c, b)
		return b, err
	}
	var got Endpoint
	sendRegs := func() error {
		if !sendRegions {
			return nil
		}
		for _, r := range ep.Regions {
			if err := send(le.AppendUint64(nil, r.Addr)); err != nil {
				return err
			}
			if err := send(le.AppendUint32(nil, r.RKey)); err != nil {
				return err
			}
		}
		return nil
	}
	recvRegs := func() error {
		for i := 0; i < recvRegions; i++ {
			a, err := recv(8)
			if err != nil {
				return err
			}
			k, err := recv(4)
			if err != nil {
				return err
			}
			got.Regions = append(got.Regions, Region{Addr: le.Uint64(a), RKey: le.Uint32(k)})
		}
		return nil
	}
	order := []func() error{sendRegs, recvRegs}
	if recvFirst {
		order = []func() error{recvRegs, sendRegs}
	}
	for _, f := range order {
		if err := f(); err != nil {
			return got, err
		}
	}
	for _, f := range []struct {
		out []byte
		in  func([]byte)
	}{
		{le.AppendUint32(nil, ep.QPN), func(b []byte) { got.QPN = le.Uint32(b) }},
		{ep.GID[:], func(b []byte) { copy(got.GID[:], b) }},
		{le.AppendUint32(nil, ep.LID), func(b []byte) { got.LID = le.Uint32(b) }},
	} {
		if err := send(f.out); err != nil {
			return got, err
		}
		b, err := recv(len(f.out))
		if err != nil {
			return got, err
		}
		f.in(b)
	}
	got.MTU = EndpointDOCAMTU
	return got, nil
}

// ExchangeEndpointDOCA against the DOCA examples' own send/receive order,
// over TCP, in both roles of the BW tests and of write_lat.
func TestExchangeEndpointDOCAWithDOCAPeer(t *testing.T) {
	server, client := docaServerEndpoint(), docaClientEndpoint()
	latClient := docaClientEndpoint()
	latClient.Regions = []Region{{Addr: 0xaaaa000, RKey: 7}, {Addr: 0xbbbb000, RKey: 8}}
	for _, tc := range []struct {
		name           string
		goSide, cSide  Endpoint
		cSends         bool // the DOCA side sends regions
		cRecvs         int  // regions the DOCA side receives
		cRecvFirst     bool
		goRecvsRegions int
	}{
		{"bw: Go client, DOCA server", client, server, true, 0, false, 2},
		{"bw: Go server, DOCA client", server, client, false, 2, false, 0},
		{"lat: Go client, DOCA server", latClient, server, true, 2, false, 2},
		{"lat: Go server, DOCA client", server, latClient, true, 2, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			type res struct {
				ep  Endpoint
				err error
			}
			ch := make(chan res, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					ch <- res{err: err}
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				ep, err := docaPeer(c, tc.cSide, tc.cSends, tc.cRecvs, tc.cRecvFirst)
				ch <- res{ep, err}
			}()
			c, err := net.Dial("tcp", l.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			got, err := ExchangeEndpointDOCA(c, tc.goSide, tc.goRecvsRegions)
			require.NoError(t, err)
			want := tc.cSide
			if !tc.cSends {
				want.Regions = nil
			}
			assert.Equal(t, want, got)
			r := <-ch
			require.NoError(t, r.err)
			wantC := tc.goSide
			if tc.cRecvs == 0 {
				wantC.Regions = nil
			}
			assert.Equal(t, wantC, r.ep)
		})
	}
}

// Two Go peers run the same call at once.
func TestExchangeEndpointGoPeers(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	a := Endpoint{QPN: 0x100, PSN: 0xabc, MTU: 1024, Regions: []Region{{Addr: 1 << 40, Length: 4096, RKey: 0x55}}}
	b := Endpoint{QPN: 0x200, PSN: 0xdef, MTU: 4096}
	ch := make(chan Endpoint, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		got, err := ExchangeEndpoint(c, b)
		errc <- err
		ch <- got
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	got, err := ExchangeEndpoint(c, a)
	require.NoError(t, err)
	assert.Equal(t, b, got)
	require.NoError(t, <-errc)
	assert.Equal(t, a, <-ch)

	_, err = ExchangeEndpointDOCA(c, a, -1)
	assert.ErrorIs(t, err, ErrInvalidValue)
}

func FuzzUnmarshalEndpointDOCA(f *testing.F) {
	f.Add(unhex(f, docaServerVector), uint16(2))
	f.Add(unhex(f, docaClientVector), uint16(0))
	f.Add([]byte{}, uint16(0))
	f.Add(make([]byte, 12*16+24), uint16(16))
	f.Fuzz(func(t *testing.T, b []byte, regions uint16) {
		e, err := UnmarshalEndpointDOCA(b, int(regions))
		if err != nil {
			var ve *Error
			require.True(t, errors.As(err, &ve), "a named *Error: %v", err)
			return
		}
		out, err := e.MarshalDOCA()
		require.NoError(t, err, "a decoded endpoint encodes")
		require.Equal(t, b, out, "DOCA decode/encode is the identity")
	})
}

func FuzzUnmarshalEndpoint(f *testing.F) {
	f.Add(unhex(f, endpointVector))
	f.Add([]byte("GDEP\x01\x00\x00\x00"))
	f.Add(unhex(f, docaServerVector))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Endpoint
		err := e.UnmarshalBinary(b)
		r := bytes.NewReader(b)
		re, rerr := ReadEndpoint(r)
		if err != nil {
			var ve *Error
			require.True(t, errors.As(err, &ve), "a named *Error: %v", err)
			if rerr == nil {
				// The stream reader stops after one endpoint: b had more.
				require.NotZero(t, r.Len(), "ReadEndpoint accepted what UnmarshalBinary refused")
			}
			return
		}
		require.NoError(t, rerr)
		require.Equal(t, e, re)
		require.Zero(t, r.Len())
		out, err := e.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, b, out, "decode/encode is the identity")
	})
}
