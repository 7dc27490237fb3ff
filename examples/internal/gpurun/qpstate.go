package gpurun

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/internal/devstruct"
)

// QPState reads the device QP back from GPU memory, with the doorbell
// record and the CQE slot at each CQ's consumer index, and describes the
// indices of its send and receive queues: what tells a kernel stuck while
// posting (reserved ahead of ready) from one waiting for a completion that
// has not come (the CQE at the consumer index still owned by the NIC). It
// is meant for a kernel that did not finish: the copies go on the legacy
// stream, which does not wait for the example's non-blocking stream, and
// QPState gives up after timeout, as a copy can still wait behind work of
// a blocking stream.
func (e *Env) QPState(timeout time.Duration) (string, error) {
	if e == nil || e.Ctx == nil || e.DevQP == 0 {
		return "", errors.New("QP state: no device QP")
	}
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := e.qpState()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(timeout):
		return "", fmt.Errorf("QP state: the copies did not finish within %v", timeout)
	}
}

func (e *Env) qpState() (string, error) {
	img := make([]byte, devstruct.QPSize)
	if err := e.Ctx.MemcpyDtoH(img, e.DevQP); err != nil {
		return "", fmt.Errorf("QP state: read the device QP: %w", err)
	}
	return describeQP(img, func(b []byte, addr uint64) error { return e.Ctx.MemcpyDtoH(b, cuda.DevPtr(addr)) })
}

// describeQP is QPState's text for the device QP image img; read copies
// the bytes at a device address (the doorbell record, CQEs).
func describeQP(img []byte, read func(b []byte, addr uint64) error) (string, error) {
	q, err := devstruct.DecodeQP(img)
	if err != nil {
		return "", fmt.Errorf("QP state: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SQ: reserved %d ready %d doorbell PI %d of %d WQEs, lock %d, DBR %s; send CQ: %s\n",
		q.SQRsvdIndex, q.SQReadyIndex, q.SQWQEPI, q.SQWQENum, q.SQLock, dbrWord(read, q.SQDBRec), cqState(read, q.CQ))
	if q.RQWQENum != 0 {
		fmt.Fprintf(&b, "RQ: reserved %d ready %d record PI %d of %d WQEs, lock %d, DBR %s; receive CQ: %s\n",
			q.RQRsvdIndex, q.RQReadyIndex, q.RQWQEPI, q.RQWQENum, q.RQLock, dbrWord(read, q.RQDBRec), cqState(read, q.CQRQ))
	}
	if q.Error.Status != devstruct.QPErrNone {
		fmt.Fprintf(&b, "error record: status %d, CQE opcode %d syndrome %#x vendor %#x, WQE index %d\n",
			q.Error.Status, q.Error.CQEOpcode, q.Error.Syndrome, q.Error.VendorSyndrome, q.Error.WQEIndex)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// dbrWord is the producer counter in the big-endian doorbell-record word
// at addr, or why it could not be read.
func dbrWord(read func([]byte, uint64) error, addr uint64) string {
	if addr == 0 {
		return "none"
	}
	var w [4]byte
	if err := read(w[:], addr); err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	return fmt.Sprint(binary.BigEndian.Uint32(w[:]) & 0xffff)
}

// cqState is a CQ's consumer index and the opcode and owner bit of the CQE
// slot it points at, with the owner bit software expects for that lap.
func cqState(read func([]byte, uint64) error, c devstruct.CQ) string {
	if c.CQENum == 0 || c.CQEDAddr == 0 {
		return "none"
	}
	x := c.CQECI + c.CQERsvd
	slot := x & uint64(c.CQENum-1)
	var cqe [64]byte
	if err := read(cqe[:], c.CQEDAddr+slot*64); err != nil {
		return fmt.Sprintf("consumer index %d of %d, CQE unreadable (%v)", c.CQECI, c.CQENum, err)
	}
	lap := (x / uint64(c.CQENum)) & 1
	return fmt.Sprintf("consumer index %d of %d, CQE at it: opcode %d owner %d (this lap's CQE has owner %d)",
		c.CQECI, c.CQENum, cqe[63]>>4, cqe[63]&1, lap)
}
