package gpunetio

import (
	"fmt"
	"sync"

	"github.com/gdaki/gpunetio/internal/devstruct"
)

// DevQPArray is a contiguous GPU array of device QPs made by GPU.ExportQPs
// (doca_gpu_verbs_export_multi_qps_dev), so kernels index qps[i].
type DevQPArray struct {
	g      *GPU
	mem    *Mem
	qps    []*QP
	mu     sync.Mutex
	closed bool
}

// ExportQPs copies the templates of qps into one allocation (64 KiB aligned;
// GPU_CPU when any QP is SW-emulated) and makes it each QP's device copy. A
// device copy made earlier by DeviceQP is freed (DOCA leaks it).
func (g *GPU) ExportQPs(qps []*QP) (*DevQPArray, error) {
	const op = "doca_gpu_verbs_export_multi_qps_dev"
	if err := g.use(op); err != nil {
		return nil, err
	}
	if len(qps) == 0 {
		return nil, newErr(op, ErrInvalidValue, "no QPs")
	}
	t := MemGPU
	seen := map[*QP]bool{}
	for i, q := range qps {
		if q == nil || q.g != g {
			return nil, newErr(op, ErrInvalidValue, "QP %d is nil, a zero value or exported to another GPU", i)
		}
		if seen[q] {
			return nil, newErr(op, ErrInvalidValue, "QP 0x%x listed twice", q.qpn)
		}
		seen[q] = true
		if q.swEmulated() {
			t = MemGPUCPU
		}
	}
	// Lock every QP (in list order; the list has no duplicates) for the
	// whole swap.
	for _, q := range qps {
		q.mu.Lock()
		defer q.mu.Unlock()
	}
	for _, q := range qps {
		if q.closed {
			return nil, newErr(op, ErrBadState, "QP 0x%x is unexported", q.qpn)
		}
		if q.arr != nil {
			return nil, newErr(op, ErrInUse, "QP 0x%x is already in a multi-QP export", q.qpn)
		}
	}
	sz := uintptr(devstruct.QPSize)
	m, err := g.memAllocFor("a DevQPArray", sz*uintptr(len(qps)), 64<<10, t)
	if err != nil {
		return nil, err
	}
	img := make([]byte, int(sz)*len(qps))
	for i, q := range qps {
		q.tmpl.Put(img[i*int(sz):])
	}
	if err := g.b.memcpyHtoD(uintptr(m.Dev), img); err != nil {
		m.free()
		return nil, wrapErr(op, ErrDriver, err, "copy %d device QPs", len(qps))
	}
	a := &DevQPArray{g: g, mem: m, qps: append([]*QP(nil), qps...)}
	track(a, "DevQPArray", fmt.Sprintf("%d device QPs at %#x on %s", len(qps), m.Dev, g.b.describe()))
	for i, q := range qps {
		if q.dev != nil {
			q.progMu.Lock()
			if err := q.dev.free(); err != nil {
				logf(LogErr, "%s: free the earlier device copy of QP 0x%x: %v", op, q.qpn, err)
			}
			q.dev = nil
			q.progMu.Unlock()
		}
		q.arr = a
		q.devPtr = m.Dev + DevPtr(uintptr(i)*sz)
		if q.swEmulated() {
			q.cpuDB.Store(m.Host + uintptr(i)*sz + uintptr(devstruct.OffsetSQWQEPI))
		}
	}
	return a, nil
}

// Ptr is the GPU address of element 0 (0 for a nil or zero array).
func (a *DevQPArray) Ptr() DevPtr {
	if a == nil || a.mem == nil {
		return 0
	}
	return a.mem.Dev
}

// Len is the number of QPs.
func (a *DevQPArray) Len() int {
	if a == nil {
		return 0
	}
	return len(a.qps)
}

// At is the GPU address of element i; an index outside 0..Len()-1 is
// ErrInvalidValue, as is a closed array (ErrBadState).
func (a *DevQPArray) At(i int) (DevPtr, error) {
	const op = "DevQPArray.At"
	if err := a.made(op); err != nil {
		return 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, newErr(op, ErrBadState, "the array is closed")
	}
	if i < 0 || i >= len(a.qps) {
		return 0, newErr(op, ErrInvalidValue, "index %d: the array holds %d QPs", i, len(a.qps))
	}
	return a.mem.Dev + DevPtr(uintptr(i)*uintptr(devstruct.QPSize)), nil
}

// made refuses a nil array and a zero value (one ExportQPs did not return).
func (a *DevQPArray) made(op string) error {
	if a == nil {
		return newErr(op, ErrInvalidValue, "nil array")
	}
	if a.mem == nil {
		return newErr(op, ErrInvalidValue, "DevQPArray is a zero value, not one made by GPU.ExportQPs")
	}
	return nil
}

// Close detaches the QPs from the array and frees it
// (doca_gpu_verbs_unexport_multi_qps_dev). SW-emulated QPs then have no
// device QP until DeviceQP makes a new one (ProgressProxy: ErrBadState).
func (a *DevQPArray) Close() error {
	const op = "doca_gpu_verbs_unexport_multi_qps_dev"
	if err := a.made(op); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	for _, q := range a.qps {
		q.mu.Lock()
		q.progMu.Lock()
		if q.arr == a {
			q.arr, q.devPtr = nil, 0
			if q.swEmulated() {
				q.cpuDB.Store(0)
			}
		}
		q.progMu.Unlock()
		q.mu.Unlock()
	}
	if err := a.mem.free(); err != nil {
		return err
	}
	a.closed = true
	untrack(a)
	return nil
}
