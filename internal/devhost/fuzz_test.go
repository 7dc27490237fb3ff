package devhost

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// FuzzPollOneCQAt feeds arbitrary CQE bytes and index state to the host-compiled
// poll_one_cq_at and checks it against a model of the probe (pre-sm_90 rule: owner parity and
// wqe_counter; REQ_ERR and RESP_ERR are errors, recorded in the QP's error record). It must never
// hang or crash.
func FuzzPollOneCQAt(f *testing.F) {
	f.Add(make([]byte, 64), uint64(0), uint64(0), uint64(0))
	ok := make([]byte, 64)
	ok[63] = 0x00
	f.Add(ok, uint64(0), uint64(0), uint64(0))
	errCQE := make([]byte, 64)
	errCQE[60], errCQE[61], errCQE[63] = 0x00, 0x05, 0xd1
	f.Add(errCQE, uint64(21), uint64(5), uint64(16))
	f.Add(make([]byte, 64), ^uint64(0), ^uint64(0)-3, ^uint64(0))
	f.Fuzz(func(t *testing.T, cqe []byte, ci, cqeCI, rsvd uint64) {
		if len(cqe) < 64 {
			return
		}
		const cqes = 16
		q := newHostQP(t, HostConfig{SQWQEs: 16, CQEs: cqes})
		atomic.StoreUint64(q.u64(offCQCI), cqeCI)
		atomic.StoreUint64(q.u64(offCQRsvd), rsvd)
		var b [64]byte
		copy(b[:], cqe)
		x := ci + rsvd
		q.WriteCQERaw(uint32(x), b)

		var want error
		opOwn := b[63]
		counter := binary.BigEndian.Uint16(b[60:62])
		parity := uint8(0)
		if x&cqes != 0 {
			parity = 1
		}
		switch {
		case ci < cqeCI:
		case ci >= cqeCI+cqes:
			want = syscall.EBUSY
		case opOwn&1 != parity || counter != uint16(ci):
			want = syscall.EBUSY
		case opOwn>>4 == CQEOpReqErr || opOwn>>4 == CQEOpRespErr:
			want = syscall.EIO
		}
		got := q.PollOneCQAt(ci, SharingGPU)
		if want == nil {
			if got != nil {
				t.Fatalf("ci %d cqe_ci %d rsvd %d op_own %#x counter %d: got %v, want success", ci, cqeCI, rsvd, opOwn, counter, got)
			}
			wantCI := cqeCI
			if ci >= cqeCI && ci+1 > wantCI {
				wantCI = ci + 1
			}
			if q.CQConsumerIndex() != wantCI {
				t.Fatalf("cqe_ci %d, want %d", q.CQConsumerIndex(), wantCI)
			}
			return
		}
		if !errors.Is(got, want) {
			t.Fatalf("ci %d cqe_ci %d rsvd %d op_own %#x counter %d: got %v, want %v", ci, cqeCI, rsvd, opOwn, counter, got, want)
		}
		if q.CQConsumerIndex() != cqeCI {
			t.Fatalf("cqe_ci moved to %d on %v", q.CQConsumerIndex(), got)
		}
		rec := q.Error()
		if want == syscall.EIO {
			if rec.Status != devstruct.QPErrCQE || rec.Syndrome != b[55] || rec.WQEIndex != ci || rec.CQEOpcode != opOwn>>4 {
				t.Fatalf("error CQE recorded as %+v", rec)
			}
		} else if rec.Status != devstruct.QPErrNone {
			t.Fatalf("%v recorded %+v", got, rec)
		}
	})
}
