package wire

import (
	"encoding/binary"
	"fmt"
)

// Control records. Besides frames, a TCP stream may carry the records that
// set up a shared-memory link (shm.go); they have their own magic, so a
// reader tells them from frames by the first four bytes:
//
//	0..3   magic "GDC" and ControlVersion
//	4..7   record length: every byte of the record, these eight included
//	8      kind: 1 offer, 2 accept, 3 refuse
//	9..11  reserved, zero
//	12..27 the offer's token
//	offer:  28..31 the offering process's pid, 32..35 the descriptor of
//	        its segment in that process, 36..43 the segment's size,
//	        44..47 the size of each of its two rings (record length 48)
//	accept: nothing more (record length 28)
//	refuse: 28.. the reason, UTF-8, at most maxReason bytes
//
// All integers are big-endian. An offer is the first record the dialling
// side writes on a connection and nothing else is written before its answer;
// an acceptor takes an offer only as the first record of an accepted
// connection.

// ControlVersion is the control-record format version after the magic.
const ControlVersion = 1

var ctlMagic = [4]byte{'G', 'D', 'C', ControlVersion}

// Control record kinds.
const (
	ctlOffer  = 1
	ctlAccept = 2
	ctlRefuse = 3
)

const (
	ctlHeaderLen = 28 // through the token
	ctlOfferLen  = 48
	maxReason    = 200
	maxCtlLen    = ctlHeaderLen + maxReason
)

// control is a decoded control record.
type control struct {
	kind   uint8
	token  [16]byte
	pid    uint32
	fd     uint32
	size   uint64
	ring   uint32
	reason string
}

// isControl reports whether the first four bytes of a record are a control
// record's magic (of any version).
func isControl(b []byte) bool {
	return len(b) >= 3 && b[0] == ctlMagic[0] && b[1] == ctlMagic[1] && b[2] == ctlMagic[2]
}

// controlLen checks the eight-byte head of a control record and returns the
// record's length.
func controlLen(b []byte) (int, error) {
	if len(b) < 8 || !isControl(b) {
		return 0, decodeErr("magic", "not a control record")
	}
	if b[3] != ControlVersion {
		return 0, decodeErr("magic", "control version %d, want %d", b[3], ControlVersion)
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if n < ctlHeaderLen || n > maxCtlLen {
		return 0, decodeErr("length", "control record length %d outside [%d, %d]", n, ctlHeaderLen, maxCtlLen)
	}
	return int(n), nil
}

// decodeControl parses one control record that fills b exactly.
func decodeControl(b []byte) (control, error) {
	var c control
	n, err := controlLen(b)
	if err != nil {
		return c, err
	}
	if n != len(b) {
		return c, decodeErr("length", "control length field %d, buffer %d bytes", n, len(b))
	}
	if b[9] != 0 || b[10] != 0 || b[11] != 0 {
		return c, decodeErr("reserved", "non-zero reserved bytes in a control record")
	}
	be := binary.BigEndian
	c.kind = b[8]
	copy(c.token[:], b[12:28])
	switch c.kind {
	case ctlOffer:
		if n != ctlOfferLen {
			return c, decodeErr("length", "offer of %d bytes, want %d", n, ctlOfferLen)
		}
		c.pid, c.fd = be.Uint32(b[28:32]), be.Uint32(b[32:36])
		c.size, c.ring = be.Uint64(b[36:44]), be.Uint32(b[44:48])
	case ctlAccept:
		if n != ctlHeaderLen {
			return c, decodeErr("length", "accept of %d bytes, want %d", n, ctlHeaderLen)
		}
	case ctlRefuse:
		c.reason = string(b[ctlHeaderLen:n])
	default:
		return c, decodeErr("kind", "unknown control record kind %d", c.kind)
	}
	return c, nil
}

// appendControl appends the encoding of c to dst.
func appendControl(dst []byte, c control) []byte {
	reason := c.reason
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	n := ctlHeaderLen
	switch c.kind {
	case ctlOffer:
		n = ctlOfferLen
	case ctlRefuse:
		n += len(reason)
	}
	be := binary.BigEndian
	b := make([]byte, n)
	copy(b[0:4], ctlMagic[:])
	be.PutUint32(b[4:8], uint32(n))
	b[8] = c.kind
	copy(b[12:28], c.token[:])
	switch c.kind {
	case ctlOffer:
		be.PutUint32(b[28:32], c.pid)
		be.PutUint32(b[32:36], c.fd)
		be.PutUint64(b[36:44], c.size)
		be.PutUint32(b[44:48], c.ring)
	case ctlRefuse:
		copy(b[ctlHeaderLen:], reason)
	}
	return append(dst, b...)
}

func (c control) String() string {
	switch c.kind {
	case ctlOffer:
		return fmt.Sprintf("offer (pid %d fd %d, %d bytes, rings of %d)", c.pid, c.fd, c.size, c.ring)
	case ctlAccept:
		return "accept"
	case ctlRefuse:
		return "refuse: " + c.reason
	}
	return fmt.Sprintf("control kind %d", c.kind)
}
