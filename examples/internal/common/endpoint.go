package common

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// RemoteBuf is a buffer the peer may RDMA-write: its address in the owner's
// address space (as registered) and its rkey, host order.
type RemoteBuf struct {
	Addr uint64 `json:"addr"`
	RKey uint32 `json:"rkey"`
}

// Endpoint is what one peer tells the other in the out-of-band exchange.
type Endpoint struct {
	Bufs []RemoteBuf
	QPN  uint32
	GID  [16]byte
	LID  uint16
}

// Sizes of the wire records.
const (
	bufRecordSize  = 8 + 4
	qpRecordSize   = 4 + 16 + 2
	doneRecordSize = 8
	// MaxBufs bounds the number of buffers of one endpoint record.
	MaxBufs = 1024
)

// ErrBadRecord matches every malformed out-of-band record.
var ErrBadRecord = errors.New("malformed out-of-band record")

// EndpointSize is the wire size of an endpoint record with n buffers.
func EndpointSize(n int) int { return n*bufRecordSize + qpRecordSize }

// MarshalBinary encodes e in the wire format (see the package doc).
func (e Endpoint) MarshalBinary() ([]byte, error) {
	if len(e.Bufs) > MaxBufs {
		return nil, fmt.Errorf("oob: encode endpoint: %d buffers (at most %d): %w", len(e.Bufs), MaxBufs, ErrBadRecord)
	}
	if err := checkQPN(e.QPN); err != nil {
		return nil, fmt.Errorf("oob: encode endpoint: %w", err)
	}
	b := make([]byte, 0, EndpointSize(len(e.Bufs)))
	for _, r := range e.Bufs {
		b = binary.LittleEndian.AppendUint64(b, r.Addr)
		b = binary.LittleEndian.AppendUint32(b, r.RKey)
	}
	b = binary.LittleEndian.AppendUint32(b, e.QPN)
	b = append(b, e.GID[:]...)
	b = binary.LittleEndian.AppendUint16(b, e.LID)
	return b, nil
}

// DecodeEndpoint decodes an endpoint record with exactly nbufs buffers; b
// must be exactly EndpointSize(nbufs) bytes.
func DecodeEndpoint(b []byte, nbufs int) (Endpoint, error) {
	var e Endpoint
	if nbufs < 0 || nbufs > MaxBufs {
		return e, fmt.Errorf("oob: decode endpoint: %d buffers (0..%d): %w", nbufs, MaxBufs, ErrBadRecord)
	}
	if len(b) != EndpointSize(nbufs) {
		return e, fmt.Errorf("oob: decode endpoint: %d bytes, want %d for %d buffers: %w", len(b), EndpointSize(nbufs), nbufs, ErrBadRecord)
	}
	if nbufs > 0 {
		e.Bufs = make([]RemoteBuf, nbufs)
	}
	for i := range e.Bufs {
		e.Bufs[i].Addr = binary.LittleEndian.Uint64(b)
		e.Bufs[i].RKey = binary.LittleEndian.Uint32(b[8:])
		b = b[bufRecordSize:]
	}
	e.QPN = binary.LittleEndian.Uint32(b)
	copy(e.GID[:], b[4:20])
	e.LID = binary.LittleEndian.Uint16(b[20:])
	if err := checkQPN(e.QPN); err != nil {
		return Endpoint{}, fmt.Errorf("oob: decode endpoint: %w", err)
	}
	return e, nil
}

func checkQPN(qpn uint32) error {
	if qpn == 0 || qpn >= 1<<24 {
		return fmt.Errorf("QP number 0x%x is not a 24-bit non-zero QPN: %w", qpn, ErrBadRecord)
	}
	return nil
}

// Done is the client's completion record.
type Done struct {
	// Reported is false when the peer closed the connection without a
	// record (a reference client).
	Reported bool
	// ErrorCQEs is the number of error completions the client's kernels saw.
	ErrorCQEs uint32
}

var doneMagic = [4]byte{'G', 'D', 'K', 'D'}

// MarshalBinary encodes the completion record.
func (d Done) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), doneMagic[:]...)
	return binary.LittleEndian.AppendUint32(b, d.ErrorCQEs), nil
}

// DecodeDone decodes an 8-byte completion record.
func DecodeDone(b []byte) (Done, error) {
	if len(b) != doneRecordSize {
		return Done{}, fmt.Errorf("oob: decode completion: %d bytes, want %d: %w", len(b), doneRecordSize, ErrBadRecord)
	}
	if [4]byte(b[:4]) != doneMagic {
		return Done{}, fmt.Errorf("oob: decode completion: bad magic % x: %w", b[:4], ErrBadRecord)
	}
	return Done{Reported: true, ErrorCQEs: binary.LittleEndian.Uint32(b[4:])}, nil
}
