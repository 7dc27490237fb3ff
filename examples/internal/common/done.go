package common

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// doneRecordSize is the size of the client's completion record.
const doneRecordSize = 8

// ErrBadRecord matches a malformed completion record.
var ErrBadRecord = errors.New("malformed out-of-band record")

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
