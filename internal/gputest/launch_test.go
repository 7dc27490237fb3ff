package gputest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/cuda"
)

// kernelArgs mirrors struct gt_args of cuda/test/device_api_test.cu.
type kernelArgs struct {
	qps, cqps  uint64 // device arrays of device QPs
	nqps, op   uint32
	laddr      uint64
	raddr      uint64
	lsig, rsig uint64
	lcnt, rcnt uint64
	lkey, rkey uint32 // big-endian
	size       uint32
	iters      uint32
	timeoutNS  uint64
	status     uint64
}

// kernelArgsSize is sizeof(struct gt_args) (static_assert in the kernel file).
const kernelArgsSize = 104

// bytes lays the arguments out as the C struct.
func (a kernelArgs) bytes() []byte {
	b := make([]byte, 0, kernelArgsSize)
	le := binary.LittleEndian
	b = le.AppendUint64(b, a.qps)
	b = le.AppendUint64(b, a.cqps)
	b = le.AppendUint32(b, a.nqps)
	b = le.AppendUint32(b, a.op)
	for _, v := range []uint64{a.laddr, a.raddr, a.lsig, a.rsig, a.lcnt, a.rcnt} {
		b = le.AppendUint64(b, v)
	}
	for _, v := range []uint32{a.lkey, a.rkey, a.size, a.iters} {
		b = le.AppendUint32(b, v)
	}
	b = le.AppendUint64(b, a.timeoutNS)
	b = le.AppendUint64(b, a.status)
	return b
}

// Failure codes of the kernels (status[1]).
var statusCodes = map[int32]string{
	1:  "error CQE on the main QP",
	2:  "timeout: no CQE on the main QP before the device deadline",
	3:  "error CQE on the companion QP",
	4:  "timeout: no CQE on the companion QP before the device deadline",
	5:  "a warp's tickets do not follow the documented slot layout",
	6:  "operation not valid for this kernel or scope",
	7:  "launch shape or QP array does not fit the sharing mode",
	8:  "error CQE on the receive CQ",
	9:  "timeout: no receive CQE before the device deadline",
	10: "a received message has the wrong opcode, length or bytes",
}

// status is what a kernel reported.
type status struct {
	failures, code, gtid, iter int32
}

func (s status) String() string {
	if s.failures == 0 {
		return "ok"
	}
	what := statusCodes[s.code]
	if what == "" {
		what = "unknown code"
	}
	return fmt.Sprintf("%d failure(s), first: code %d (%s) in global thread %d, iteration %d", s.failures, s.code, what, s.gtid, s.iter)
}

// launch is one kernel run.
type launch struct {
	kernel      string
	grid, block uint32
	args        kernelArgs
}

// baseArgs fills the addresses, keys, timeout and status of the shared buffers.
func (e *env) baseArgs() kernelArgs {
	return kernelArgs{
		laddr: e.loc.addr(dataOff), raddr: e.rem.addr(dataOff),
		lsig: e.loc.addr(sigOff), rsig: e.rem.addr(sigOff),
		lcnt: e.loc.addr(cntOff), rcnt: e.rem.addr(cntOff),
		lkey: be32(e.loc.mr.LKey()), rkey: be32(e.rem.mr.RKey()),
		timeoutNS: uint64(devTimeout / time.Nanosecond),
		status:    uint64(e.status.Dev),
	}
}

// run launches l, waits for it and returns its status. A kernel that
// outlives hostTimeout abandons the environment and fails the test.
func (e *env) run(t *testing.T, l launch) status {
	t.Helper()
	f, err := e.function(l.kernel)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ctx.MemsetD8(cuda.DevPtr(e.status.Dev), 0, 16); err != nil {
		t.Fatalf("kernel %s: clear the status words: %v", l.kernel, err)
	}
	start := time.Now()
	if err := e.ctx.LaunchKernel(f, cuda.Dim3{X: l.grid}, cuda.Dim3{X: l.block}, 0, e.stream, l.args.bytes()); err != nil {
		t.Fatalf("launch kernel %s <<<%d, %d>>>: %v", l.kernel, l.grid, l.block, err)
	}
	if err := e.stream.Wait(hostTimeout); err != nil {
		e.abandoned = true
		t.Fatalf("kernel %s <<<%d, %d>>> op %d did not finish within %v (device deadline %v): %v; "+
			"the environment is abandoned (resources are left to the process exit)", l.kernel, l.grid, l.block, l.args.op, hostTimeout, devTimeout, err)
	}
	var b [16]byte
	if err := e.ctx.MemcpyDtoH(b[:], cuda.DevPtr(e.status.Dev)); err != nil {
		t.Fatalf("kernel %s: read the status words: %v", l.kernel, err)
	}
	le := binary.LittleEndian
	s := status{int32(le.Uint32(b[0:])), int32(le.Uint32(b[4:])), int32(le.Uint32(b[8:])), int32(le.Uint32(b[12:]))}
	t.Logf("kernel %s <<<%d, %d>>> op %d size %d iters %d: %v in %v", l.kernel, l.grid, l.block, l.args.op, l.args.size, l.args.iters, s, time.Since(start).Round(time.Microsecond))
	return s
}

// Patterns: distinct per side and per case, so stale bytes never match.
func localPattern(i int, seed byte) byte  { return byte(i*7) + seed*13 + 1 }
func remotePattern(i int, seed byte) byte { return (byte(i*11) + seed*5 + 3) ^ 0x5a }

// images are the host copies of both registered buffers.
type images struct {
	loc, rem []byte
}

// newImages returns the initial contents of both buffers: patterns in the
// data regions, zeros in the signal and counter regions.
func newImages(seed byte) images {
	im := images{loc: make([]byte, bufSize), rem: make([]byte, bufSize)}
	for i := dataOff; i < dataOff+dataSize; i++ {
		im.loc[i] = localPattern(i, seed)
		im.rem[i] = remotePattern(i, seed)
	}
	return im
}

func (im images) clone() images {
	return images{loc: bytes.Clone(im.loc), rem: bytes.Clone(im.rem)}
}

// load writes the images into both GPU buffers.
func (e *env) load(t *testing.T, im images) {
	t.Helper()
	if err := e.ctx.MemcpyHtoD(cuda.DevPtr(e.loc.mem.Dev), im.loc); err != nil {
		t.Fatalf("fill the emu0 buffer: %v", err)
	}
	if err := e.ctx.MemcpyHtoD(cuda.DevPtr(e.rem.mem.Dev), im.rem); err != nil {
		t.Fatalf("fill the emu1 buffer: %v", err)
	}
}

// read copies both GPU buffers back.
func (e *env) read(t *testing.T) images {
	t.Helper()
	im := images{loc: make([]byte, bufSize), rem: make([]byte, bufSize)}
	if err := e.ctx.MemcpyDtoH(im.loc, cuda.DevPtr(e.loc.mem.Dev)); err != nil {
		t.Fatalf("read the emu0 buffer: %v", err)
	}
	if err := e.ctx.MemcpyDtoH(im.rem, cuda.DevPtr(e.rem.mem.Dev)); err != nil {
		t.Fatalf("read the emu1 buffer: %v", err)
	}
	return im
}

// layout explains buffer offsets in failure messages.
type layout struct {
	size, iters uint32
}

func (l layout) where(off int) string {
	switch {
	case off >= dataOff && off < dataOff+dataSize && l.size > 0:
		d := off - dataOff
		region := "data"
		if d >= llHalf {
			region = "data (second half)"
		}
		idx := uint32(d) / l.size
		if l.iters > 0 {
			return fmt.Sprintf("%s +0x%x: op %d (thread %d, iteration %d), byte %d of %d", region, d, idx, idx/l.iters, idx%l.iters, uint32(d)%l.size, l.size)
		}
		return fmt.Sprintf("%s +0x%x", region, d)
	case off >= sigOff && off < sigOff+sigSize:
		return fmt.Sprintf("signal word %d, byte %d", (off-sigOff)/8, (off-sigOff)%8)
	case off >= cntOff && off < cntOff+cntSize:
		return fmt.Sprintf("counter/fetch word %d, byte %d", (off-cntOff)/8, (off-cntOff)%8)
	}
	return fmt.Sprintf("+0x%x", off)
}

// compare checks got against want byte by byte, except in the skipped
// ranges, and reports at most a few mismatches with their meaning.
func compare(t *testing.T, what, side string, got, want []byte, l layout, skip [][2]int) {
	t.Helper()
	const maxReport = 8
	var msgs []string
	bad := 0
	for i := range want {
		if got[i] == want[i] || skipped(i, skip) {
			continue
		}
		bad++
		if len(msgs) < maxReport {
			msgs = append(msgs, fmt.Sprintf("  %s byte 0x%x (%s): got 0x%02x, want 0x%02x", side, i, l.where(i), got[i], want[i]))
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d wrong byte(s) in the %s buffer; first ones:\n%s", what, bad, side, strings.Join(msgs, "\n"))
	}
}

func skipped(i int, skip [][2]int) bool {
	for _, r := range skip {
		if i >= r[0] && i < r[1] {
			return true
		}
	}
	return false
}

func getU64(b []byte, off int) uint64    { return binary.LittleEndian.Uint64(b[off:]) }
func putU64(b []byte, off int, v uint64) { binary.LittleEndian.PutUint64(b[off:], v) }

// pValue is gt_pvalue: the value p, p_signal and p_counter write for op idx.
func pValue(idx, size uint32) uint64 {
	return (uint64(idx)+1)*0x9E3779B97F4A7C15 ^ uint64(size)*0x100000001B3
}

// checkFetchAdds checks the old values that n concurrent fetch-adds of
// adds[i] to one word (starting at 0) returned: sorted by old value they must
// chain, each old being the previous old plus its add, ending at the word's
// final value. It returns "" when they do.
func checkFetchAdds(olds, adds []uint64, final uint64) string {
	type fa struct{ old, add uint64 }
	v := make([]fa, len(olds))
	for i := range olds {
		v[i] = fa{olds[i], adds[i]}
	}
	// insertion sort: a few hundred entries at most
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j].old < v[j-1].old; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	var sum uint64
	for i, x := range v {
		if x.old != sum {
			return fmt.Sprintf("fetch-add results do not chain: the %d-th smallest old value is %d, want %d (the sum of the adds before it)", i, x.old, sum)
		}
		sum += x.add
	}
	if sum != final {
		return fmt.Sprintf("the word holds %d, the adds sum to %d", final, sum)
	}
	return ""
}

// handlerFixture runs the per-handler preamble of every test.
func handlerFixture(t *testing.T, e *env, hc handlerCase) *fixture {
	t.Helper()
	hc.skipUnsupported(t)
	return e.fixture(t, hc)
}
