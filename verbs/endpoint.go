package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Region is memory a peer may access with RDMA READ, WRITE or atomics: its
// address in the owner's MR (the iova WQEs name), its length and its rkey.
type Region struct {
	Addr   uint64
	Length uint64 // bytes; 0 when unknown (the DOCA format does not carry it)
	RKey   uint32
}

// Region describes the whole registered range of m for a peer.
func (m *MR) Region() Region {
	return Region{Addr: m.IOVA(), Length: m.Len(), RKey: m.RKey()}
}

// Endpoint is what one side of an RC connection tells the other out of band:
// how to reach its QP and which memory the peer may access. ConnectRC takes
// the remote side's Endpoint.
//
// Two binary encodings exist. MarshalDOCA and UnmarshalEndpointDOCA use the
// raw byte stream the DOCA GPUNetIO examples exchange, so a Go program can
// talk to NVIDIA's C++ examples; it carries no count, length, PSN or MTU.
// MarshalBinary and UnmarshalBinary use a self-describing encoding that
// carries every field, for Go peers. ReadEndpoint, WriteEndpoint and their
// DOCA variants move either over an io.Reader or io.Writer (a TCP
// connection, typically).
type Endpoint struct {
	GID GID
	// LID is the port LID on InfiniBand (16 bits; sent as 4 bytes, as DOCA
	// does); 0 on RoCE.
	LID uint32
	// QPN is the QP number (24 bits, not 0).
	QPN uint32
	// PSN is the first packet sequence number this side sends (24 bits);
	// the peer expects it. DOCA uses 0.
	PSN uint32
	// MTU is the largest path MTU this side accepts, in bytes: 256, 512,
	// 1024, 2048 or 4096. 0 means DOCA's 4096.
	MTU int
	// Regions the peer may access, in an order both sides agree on.
	Regions []Region
}

// Limits and sizes of the encodings.
const (
	// MaxEndpointRegions bounds the regions of one endpoint in both
	// encodings, so a decoder never allocates more than it can check.
	MaxEndpointRegions = 1024
	// EndpointDOCAMTU and EndpointDOCAPSN are the values the DOCA format
	// implies: the DOCA examples connect with a 4096-byte path MTU and PSN 0.
	EndpointDOCAMTU = 4096
	EndpointDOCAPSN = 0

	docaRegionSize = 8 + 4      // addr, rkey
	docaTailSize   = 4 + 16 + 4 // qpn, gid, lid

	// Self-describing encoding, version 1 (all integers little-endian):
	//
	//	0   4   magic "GDEP"
	//	4   2   version (1)
	//	6   2   region count n (at most MaxEndpointRegions)
	//	8   4   QPN
	//	12  4   PSN
	//	16  4   MTU in bytes (0, 256, 512, 1024, 2048 or 4096)
	//	20  4   LID
	//	24  16  GID
	//	40  20n regions: addr u64, length u64, rkey u32
	endpointVersion    = 1
	endpointHeaderSize = 40
	endpointRegionSize = 8 + 8 + 4
)

var endpointMagic = [4]byte{'G', 'D', 'E', 'P'}

// EndpointDOCASize is the size of the DOCA encoding of an endpoint with
// regions regions.
func EndpointDOCASize(regions int) int { return regions*docaRegionSize + docaTailSize }

// EndpointSize is the size of the self-describing encoding of an endpoint
// with regions regions.
func EndpointSize(regions int) int { return endpointHeaderSize + regions*endpointRegionSize }

// validMTUBytes reports whether n is an Endpoint.MTU value.
func validMTUBytes(n int) bool {
	if n == 0 {
		return true
	}
	_, err := MTUFromBytes(n)
	return err == nil
}

// effectiveMTU is the endpoint's MTU with 0 read as DOCA's 4096.
func (e *Endpoint) effectiveMTU() int {
	if e.MTU == 0 {
		return EndpointDOCAMTU
	}
	return e.MTU
}

// check validates the fields every encoding carries; the error's message
// starts with what.
func (e *Endpoint) check(op, what string) error {
	if e.QPN == 0 || e.QPN > qpnMask {
		return newErr(op, ErrInvalidValue, "%sQPN 0x%x is not a 24-bit QP number (1..0xffffff)", what, e.QPN)
	}
	if e.LID > 0xffff {
		return newErr(op, ErrInvalidValue, "%sLID 0x%x does not fit 16 bits", what, e.LID)
	}
	if e.PSN > psnMask {
		return newErr(op, ErrInvalidValue, "%sPSN 0x%x does not fit 24 bits", what, e.PSN)
	}
	if !validMTUBytes(e.MTU) {
		return newErr(op, ErrInvalidValue, "%sMTU %d: want 256, 512, 1024, 2048, 4096 or 0 (4096)", what, e.MTU)
	}
	if len(e.Regions) > MaxEndpointRegions {
		return newErr(op, ErrTooBig, "%s%d regions: at most %d", what, len(e.Regions), MaxEndpointRegions)
	}
	return nil
}

// MarshalDOCA encodes e in the byte stream the DOCA GPUNetIO examples
// exchange: for each region its address (8 bytes) and rkey (4 bytes), then
// the QPN (4), the GID (16, network order) and the LID (4), integers
// little-endian, with no framing. The receiver must know how many regions to
// expect. Region lengths are not sent. The format carries no PSN and no MTU:
// a DOCA peer uses PSN 0 and a 4096-byte MTU, so an endpoint with another PSN
// or MTU (0 reads as 4096) is refused with ErrInvalidValue rather than sent
// without them.
func (e Endpoint) MarshalDOCA() ([]byte, error) {
	const op = "Endpoint.MarshalDOCA"
	if err := e.check(op, ""); err != nil {
		return nil, err
	}
	if e.PSN != EndpointDOCAPSN {
		return nil, newErr(op, ErrInvalidValue, "PSN 0x%x: the DOCA format carries no PSN and a DOCA peer expects %d", e.PSN, EndpointDOCAPSN)
	}
	if m := e.effectiveMTU(); m != EndpointDOCAMTU {
		return nil, newErr(op, ErrInvalidValue, "MTU %d: the DOCA format carries no MTU and a DOCA peer uses %d (set MTU to 0 or %d to use it)", m, EndpointDOCAMTU, EndpointDOCAMTU)
	}
	b := make([]byte, 0, EndpointDOCASize(len(e.Regions)))
	for _, r := range e.Regions {
		b = binary.LittleEndian.AppendUint64(b, r.Addr)
		b = binary.LittleEndian.AppendUint32(b, r.RKey)
	}
	b = binary.LittleEndian.AppendUint32(b, e.QPN)
	b = append(b, e.GID[:]...)
	b = binary.LittleEndian.AppendUint32(b, e.LID)
	return b, nil
}

// UnmarshalEndpointDOCA decodes the DOCA encoding of an endpoint with
// exactly regions regions; b must be exactly EndpointDOCASize(regions)
// bytes. The result has PSN 0 and MTU 4096 (what a DOCA peer uses) and
// region lengths 0 (unknown).
func UnmarshalEndpointDOCA(b []byte, regions int) (Endpoint, error) {
	const op = "UnmarshalEndpointDOCA"
	if regions < 0 || regions > MaxEndpointRegions {
		return Endpoint{}, newErr(op, ErrInvalidValue, "%d regions: want 0..%d", regions, MaxEndpointRegions)
	}
	if want := EndpointDOCASize(regions); len(b) != want {
		return Endpoint{}, newErr(op, ErrInvalidValue, "%d bytes: %d regions take %d", len(b), regions, want)
	}
	e := Endpoint{PSN: EndpointDOCAPSN, MTU: EndpointDOCAMTU}
	if regions > 0 {
		e.Regions = make([]Region, regions)
	}
	for i := range e.Regions {
		e.Regions[i] = Region{Addr: binary.LittleEndian.Uint64(b), RKey: binary.LittleEndian.Uint32(b[8:])}
		b = b[docaRegionSize:]
	}
	e.QPN = binary.LittleEndian.Uint32(b)
	copy(e.GID[:], b[4:20])
	e.LID = binary.LittleEndian.Uint32(b[20:])
	if err := e.check(op, ""); err != nil {
		return Endpoint{}, err
	}
	return e, nil
}

// MarshalBinary encodes e in the self-describing encoding (magic "GDEP",
// version 1, region count, then every field, little-endian). It implements
// encoding.BinaryMarshaler.
func (e Endpoint) MarshalBinary() ([]byte, error) {
	const op = "Endpoint.MarshalBinary"
	if err := e.check(op, ""); err != nil {
		return nil, err
	}
	b := make([]byte, 0, EndpointSize(len(e.Regions)))
	b = append(b, endpointMagic[:]...)
	b = binary.LittleEndian.AppendUint16(b, endpointVersion)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(e.Regions)))
	b = binary.LittleEndian.AppendUint32(b, e.QPN)
	b = binary.LittleEndian.AppendUint32(b, e.PSN)
	b = binary.LittleEndian.AppendUint32(b, uint32(e.MTU))
	b = binary.LittleEndian.AppendUint32(b, e.LID)
	b = append(b, e.GID[:]...)
	for _, r := range e.Regions {
		b = binary.LittleEndian.AppendUint64(b, r.Addr)
		b = binary.LittleEndian.AppendUint64(b, r.Length)
		b = binary.LittleEndian.AppendUint32(b, r.RKey)
	}
	return b, nil
}

// UnmarshalBinary decodes the self-describing encoding; b must hold exactly
// one endpoint. It implements encoding.BinaryUnmarshaler. On error e is not
// changed.
func (e *Endpoint) UnmarshalBinary(b []byte) error {
	const op = "Endpoint.UnmarshalBinary"
	n, err := parseEndpointHeader(op, b)
	if err != nil {
		return err
	}
	if want := EndpointSize(n); len(b) != want {
		return newErr(op, ErrInvalidValue, "%d bytes: an endpoint with %d regions takes %d", len(b), n, want)
	}
	var d Endpoint
	decodeEndpointHeader(&d, b)
	if n > 0 {
		d.Regions = make([]Region, n)
	}
	b = b[endpointHeaderSize:]
	for i := range d.Regions {
		d.Regions[i] = Region{Addr: binary.LittleEndian.Uint64(b), Length: binary.LittleEndian.Uint64(b[8:]),
			RKey: binary.LittleEndian.Uint32(b[16:])}
		b = b[endpointRegionSize:]
	}
	if err := d.check(op, ""); err != nil {
		return err
	}
	*e = d
	return nil
}

// parseEndpointHeader checks magic, version and count of a self-describing
// encoding and returns the region count.
func parseEndpointHeader(op string, b []byte) (int, error) {
	if len(b) < endpointHeaderSize {
		return 0, newErr(op, ErrInvalidValue, "%d bytes: shorter than the %d-byte header", len(b), endpointHeaderSize)
	}
	if [4]byte(b[:4]) != endpointMagic {
		return 0, newErr(op, ErrInvalidValue, "bad magic % x (want %q): not an endpoint in the self-describing encoding", b[:4], endpointMagic[:])
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != endpointVersion {
		return 0, newErr(op, ErrUnsupportedVersion, "endpoint encoding version %d: this library reads version %d", v, endpointVersion)
	}
	n := int(binary.LittleEndian.Uint16(b[6:]))
	if n > MaxEndpointRegions {
		return 0, newErr(op, ErrTooBig, "%d regions: at most %d", n, MaxEndpointRegions)
	}
	return n, nil
}

func decodeEndpointHeader(d *Endpoint, b []byte) {
	d.QPN = binary.LittleEndian.Uint32(b[8:])
	d.PSN = binary.LittleEndian.Uint32(b[12:])
	d.MTU = int(binary.LittleEndian.Uint32(b[16:]))
	d.LID = binary.LittleEndian.Uint32(b[20:])
	copy(d.GID[:], b[24:40])
}

// WriteEndpointDOCA writes the DOCA encoding of e to w in one Write.
//
// To talk to a DOCA example, both sides write their endpoint before reading
// the peer's: the DOCA examples send each field before receiving the peer's,
// so a side that reads first waits for fields the peer sends only after it
// received this side's. On a buffered transport such as TCP the endpoints
// are small enough for both writes to complete before either side reads; on
// an unbuffered one (net.Pipe) write from another goroutine.
func WriteEndpointDOCA(w io.Writer, e Endpoint) error {
	b, err := e.MarshalDOCA()
	if err != nil {
		return err
	}
	return writeAll("WriteEndpointDOCA", w, b)
}

// ReadEndpointDOCA reads the DOCA encoding of an endpoint with exactly
// regions regions from r (full reads; at most EndpointDOCASize(regions)
// bytes are consumed).
func ReadEndpointDOCA(r io.Reader, regions int) (Endpoint, error) {
	const op = "ReadEndpointDOCA"
	if regions < 0 || regions > MaxEndpointRegions {
		return Endpoint{}, newErr(op, ErrInvalidValue, "%d regions: want 0..%d", regions, MaxEndpointRegions)
	}
	b := make([]byte, EndpointDOCASize(regions))
	if err := readFull(op, r, b); err != nil {
		return Endpoint{}, err
	}
	return UnmarshalEndpointDOCA(b, regions)
}

// WriteEndpoint writes the self-describing encoding of e to w in one Write.
// As with WriteEndpointDOCA, both sides may write before they read.
func WriteEndpoint(w io.Writer, e Endpoint) error {
	b, err := e.MarshalBinary()
	if err != nil {
		return err
	}
	return writeAll("WriteEndpoint", w, b)
}

// ReadEndpoint reads one endpoint in the self-describing encoding from r:
// the header, then exactly the regions it announces (at most
// MaxEndpointRegions). Nothing after the endpoint is consumed.
func ReadEndpoint(r io.Reader) (Endpoint, error) {
	const op = "ReadEndpoint"
	b := make([]byte, endpointHeaderSize, EndpointSize(0))
	if err := readFull(op, r, b); err != nil {
		return Endpoint{}, err
	}
	n, err := parseEndpointHeader(op, b)
	if err != nil {
		return Endpoint{}, err
	}
	b = append(b, make([]byte, n*endpointRegionSize)...)
	if err := readFull(op, r, b[endpointHeaderSize:]); err != nil {
		return Endpoint{}, err
	}
	var e Endpoint
	if err := e.UnmarshalBinary(b); err != nil {
		return Endpoint{}, err
	}
	return e, nil
}

// readFull fills b from r. A failure is ErrConnectionAborted, as in the
// DOCA examples (a stream that ends early wraps io.ErrUnexpectedEOF, or
// io.EOF when nothing was read), or ErrTimeOut for a passed deadline
// (os.ErrDeadlineExceeded); the cause is wrapped.
func readFull(op string, r io.Reader, b []byte) error {
	n, err := io.ReadFull(r, b)
	if err == nil {
		return nil
	}
	return wrapErr(op, ioCode(err), err, "read %d of %d bytes", n, len(b))
}

// writeAll writes b to w; a short write without an error is reported as
// io.ErrShortWrite. Failures are coded as in readFull.
func writeAll(op string, w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return wrapErr(op, ioCode(err), err, "wrote %d of %d bytes", n, len(b))
	}
	return nil
}

func ioCode(err error) Code {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrTimeOut
	}
	return ErrConnectionAborted
}

// String summarizes the endpoint for logs.
func (e Endpoint) String() string {
	return fmt.Sprintf("QPN 0x%06x GID %v LID %d PSN 0x%06x MTU %d, %d regions", e.QPN, e.GID, e.LID, e.PSN, e.effectiveMTU(), len(e.Regions))
}

// ExchangeEndpointDOCA writes local to rw in the DOCA encoding, then reads
// the peer's endpoint, which must carry remoteRegions regions. Both sides
// call it; the order works against the DOCA examples in either role (see
// WriteEndpointDOCA). rw's deadlines, if any, bound it; on an unbuffered rw
// both sides block in the write.
func ExchangeEndpointDOCA(rw io.ReadWriter, local Endpoint, remoteRegions int) (Endpoint, error) {
	const op = "ExchangeEndpointDOCA"
	if remoteRegions < 0 || remoteRegions > MaxEndpointRegions {
		return Endpoint{}, newErr(op, ErrInvalidValue, "%d remote regions: want 0..%d", remoteRegions, MaxEndpointRegions)
	}
	if err := WriteEndpointDOCA(rw, local); err != nil {
		return Endpoint{}, err
	}
	return ReadEndpointDOCA(rw, remoteRegions)
}

// ExchangeEndpoint writes local to rw in the self-describing encoding, then
// reads the peer's. Both sides call it; as with ExchangeEndpointDOCA, rw
// must buffer the write (TCP does).
func ExchangeEndpoint(rw io.ReadWriter, local Endpoint) (Endpoint, error) {
	if err := WriteEndpoint(rw, local); err != nil {
		return Endpoint{}, err
	}
	return ReadEndpoint(rw)
}
