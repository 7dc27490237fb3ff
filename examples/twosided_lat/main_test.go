package main

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/cuda"
	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func kernelSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("kernel.cu")
	require.NoError(t, err)
	return string(src)
}

func TestKernelNamesExist(t *testing.T) {
	src := kernelSource(t)
	for _, server := range []bool{false, true} {
		assert.Contains(t, src, `extern "C" __global__ void `+kernelName(server)+"(", "server %v", server)
	}
	assert.NotEqual(t, kernelName(false), kernelName(true))
}

// The kernels include the two-sided header and use its calls, thread scope.
func TestKernelUsesTwoSidedAPI(t *testing.T) {
	src := kernelSource(t)
	for _, s := range []string{"<doca_gpunetio_dev_verbs_twosided.cuh>", "doca_gpu_dev_verbs_recv<", "doca_gpu_dev_verbs_send<",
		"doca_gpu_dev_verbs_wait_recv<", "DOCA_GPUNETIO_VERBS_QP_RQ", "#define TWOSIDED_LAT_SCOPE DOCA_GPUNETIO_VERBS_EXEC_SCOPE_THREAD"} {
		assert.Contains(t, src, s)
	}
}

func TestProgram(t *testing.T) {
	assert.False(t, prog.DBRMode)
	assert.False(t, prog.ExecScope)
	assert.Zero(t, prog.IterMult)
	assert.Zero(t, prog.MaxIters)
	assert.Equal(t, "twosided_lat_kernel.fatbin", prog.Kernel)
	assert.Equal(t, []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB}, prog.Handlers)
}

// The flags are write_lat's without -r, and -i takes any positive count.
func TestFlags(t *testing.T) {
	cfg, err := common.Parse(prog, []string{"-d", "emu1", "-c", "127.0.0.1", "-p", "2", "-i", "7", "-o", "x.json"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, gpunetio.NICHandlerGPUSMDB, cfg.Handler)
	assert.Equal(t, uint32(7), cfg.Iters)
	assert.True(t, cfg.IsClient())
	assert.Equal(t, common.FormatJSON, cfg.Format)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-p", "6"}, "BlueFlame not supported"},
		{[]string{"-r", "1"}, "-r"},
		{[]string{"-e", "1"}, "-e"},
		{[]string{"-i", "0"}, "positive integer"},
	} {
		var stderr bytes.Buffer
		_, err := common.Parse(prog, tc.args, &stderr)
		require.Error(t, err, "%v", tc.args)
		assert.ErrorIs(t, err, common.ErrUsage, "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.msg, "%v", tc.args)
	}
}

// defines returns the integer #defines of kernel.cu.
func defines(t *testing.T) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	re := regexp.MustCompile(`(?m)^#define (TWOSIDED_LAT_[A-Z_]+) (0x[0-9a-f]+|[0-9]+)u$`)
	for _, d := range re.FindAllStringSubmatch(kernelSource(t), -1) {
		v, err := strconv.ParseUint(d[2], 0, 64)
		require.NoError(t, err, d[0])
		m[d[1]] = v
	}
	return m
}

// The status bits and the geometry the host reads and launches are the
// kernel's.
func TestKernelConstants(t *testing.T) {
	d := defines(t)
	for name, want := range map[string]uint64{
		"TWOSIDED_LAT_TIMED_OUT":   statusTimedOut,
		"TWOSIDED_LAT_ERROR_CQE":   statusErrorCQE,
		"TWOSIDED_LAT_BAD_LENGTH":  statusBadLength,
		"TWOSIDED_LAT_OUT_OF_STEP": statusOutOfStep,
		"TWOSIDED_LAT_BAD_LAUNCH":  statusBadLaunch,
		"TWOSIDED_LAT_THREADS":     threads,
	} {
		got, ok := d[name]
		if assert.True(t, ok, "%s not defined in kernel.cu", name) {
			assert.Equal(t, want, got, name)
		}
	}
}

// patternByte spells the kernel's payload function; the kernel's text of it
// is pinned here, so that a change to one shows in the other.
func TestPatternMatchesKernel(t *testing.T) {
	src := kernelSource(t)
	assert.Contains(t, src, "return (uint8_t)((uint32_t)seq * 3u + (((uint32_t)size * 2654435761u) >> 24));")
	// A few values worked out by hand: size 1 hashes to 2654435761>>24 =
	// 158, size 64 to (64*2654435761 mod 2^32)>>24 = 141.
	assert.Equal(t, byte(158+3), patternByte(1, 1, 0))
	assert.Equal(t, byte(141+6+10), patternByte(2, 64, 10))
	assert.Equal(t, byte(0), patternByte(0, 0, 0))
}

// The payload tells apart every message from the one that used the same
// buffer half before it (seq - 2), at every byte and size, so a message
// that did not arrive is never taken for one that did; consecutive bytes
// differ by one.
func TestPatternDetectsStaleData(t *testing.T) {
	for _, size := range common.LatSizes {
		for _, seq := range []uint64{3, 4, 100, 2048*20 - 1, 1 << 32, 1<<32 + 1} {
			for _, pos := range []int{0, 1, int(size) / 2, int(size) - 1} {
				assert.NotEqual(t, patternByte(seq-2, size, pos), patternByte(seq, size, pos), "size %d seq %d pos %d", size, seq, pos)
				if pos > 0 {
					assert.Equal(t, patternByte(seq, size, pos-1)+1, patternByte(seq, size, pos))
				}
			}
		}
	}
}

func message(seq, size uint64) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = patternByte(seq, size, i)
	}
	return b
}

func TestCheckMessage(t *testing.T) {
	msg := message(77, 4096)
	require.NoError(t, checkMessage(msg, 77, 7))
	assert.Error(t, checkMessage(msg, 75, 7), "the message two before")
	msg[1000] ^= 0x40
	err := checkMessage(msg, 77, 7)
	var ve *common.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, common.ValidationError{Buffer: 7, Pos: 1000, Value: msg[1000]}, *ve)
	assert.EqualError(t, err, "Validation error: buffer 7 pos 1000 has invalid data "+strconv.Itoa(int(msg[1000])))
}

// whereError decodes what the server kernel records: ((pos+1)<<8) | value.
func TestWhereError(t *testing.T) {
	assert.Equal(t, &common.ValidationError{Buffer: 3, Pos: 0, Value: 0x2a}, whereError(1<<8|0x2a, 3))
	assert.Equal(t, &common.ValidationError{Buffer: 9, Pos: 16383, Value: 0xff}, whereError(16384<<8|0xff, 9))
}

func TestStatusError(t *testing.T) {
	assert.NoError(t, statusError(0, 64, time.Second))
	assert.EqualError(t, statusError(statusTimedOut, 64, 5*time.Second), "message size 64: the kernel gave up waiting for the peer after 5s")
	err := statusError(statusErrorCQE|statusBadLength|0x100, 1, time.Second)
	require.Error(t, err)
	for _, s := range []string{"message size 1:", "error completion", "byte count", "unknown status 0x100"} {
		assert.Contains(t, err.Error(), s)
	}
	assert.Contains(t, statusError(statusOutOfStep, 1, time.Second).Error(), "receive index")
	assert.Contains(t, statusError(statusBadLaunch, 1, time.Second).Error(), "1 block of 32 threads")
}

// Message numbers continue across launches: launch k+1 starts where k
// ended, so receive indexes and buffer halves line up across launches.
func TestSeqBase(t *testing.T) {
	const iters = 256
	for k := 1; k < 2*len(common.LatSizes); k++ {
		assert.Equal(t, seqBase(k-1, iters)+iters, seqBase(k, iters))
	}
	assert.Zero(t, seqBase(0, iters))
	assert.Equal(t, uint64(1)<<33, seqBase(2, 1<<32-1)+2)
}

// Every receive fits the largest message, and the halves keep 16-byte
// alignment (the kernels move the payload 16 bytes at a time).
func TestGeometry(t *testing.T) {
	for _, size := range common.LatSizes {
		assert.LessOrEqual(t, size, stride)
	}
	assert.Zero(t, stride%16)
	assert.GreaterOrEqual(t, rqWQEs, 2, "two receives outstanding a side")
	assert.Equal(t, 32, threads)
	s := describe(common.Config{Server: "x", Iters: 256})
	assert.Contains(t, s, "client kernel twosided_lat_client with 1 CUDA block of 32 CUDA threads")
	assert.Contains(t, s, "256 round trips per message size")
}

// The table is write_lat's: its rows parse back with one way half the
// round trip, as scripts/examples-gpu-test.sh checks them.
func TestTable(t *testing.T) {
	var out bytes.Buffer
	common.WriteLatHeader(&out)
	for i, size := range common.LatSizes {
		common.WriteLatRow(&out, common.NewLatRow(size, 256, time.Duration(i+1)*time.Millisecond))
	}
	var n int
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.HasPrefix(line, " ") || len(line) < 2 || line[1] < '0' || line[1] > '9' {
			continue
		}
		f := strings.Fields(line)
		require.Len(t, f, 5, line)
		assert.Equal(t, strconv.FormatUint(common.LatSizes[n], 10), f[0])
		assert.Equal(t, "256", f[1])
		oneWay, err1 := strconv.ParseFloat(f[2], 64)
		rtt, err2 := strconv.ParseFloat(f[3], 64)
		kernel, err3 := strconv.ParseFloat(f[4], 64)
		require.NoError(t, errors.Join(err1, err2, err3))
		assert.InDelta(t, 2*oneWay, rtt, 0.02)
		assert.InDelta(t, kernel/256, rtt, 0.01+0.01*rtt)
		n++
	}
	assert.Equal(t, len(common.LatSizes), n)
}

// kernel.cu compiles with NVRTC from the embedded headers alone (here for
// a fixed architecture: no GPU is needed), with both entry points. It
// keeps a plain t.Skipf (examples import no internal package): the GPU
// suite builds the same kernel with nvcc.
func TestKernelCompilesWithNVRTC(t *testing.T) {
	if _, err := cuda.NVRTCLibrary(); errors.Is(err, cuda.ErrNoNVRTC) {
		t.Skipf("no NVRTC library (libnvrtc) on this machine: %v", err)
	}
	out, err := cuda.Compile(kernelSource(t), "kernel.cu", &cuda.CompileOptions{Arch: "sm_80"})
	require.NoError(t, err)
	for _, server := range []bool{false, true} {
		assert.Contains(t, string(out.PTX), ".entry "+kernelName(server)+"(")
	}
	assert.NotEmpty(t, out.Image())
}
