package main

import (
	"bytes"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/gpunetio/leaktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain fails the package when a test leaves a verbs, gpunetio or CUDA
// object open, naming each and the stack that made it.
func TestMain(m *testing.M) { leaktest.Main(m) }

func testConfig(h gpunetio.NICHandler) config {
	return config{iters: 512, threads: 4, handler: h, maxSize: 4096, server: "emu0", client: "emu1", timeout: 10 * time.Second}
}

// rows parses the table of the output: size, iterations, Gbps, Mpps, ms.
func rows(t *testing.T, out string) [][5]float64 {
	t.Helper()
	var r [][5]float64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			continue
		}
		var row [5]float64
		ok := true
		for i := range f {
			v, err := strconv.ParseFloat(f[i], 64)
			ok = ok && err == nil
			row[i] = v
		}
		if ok {
			r = append(r, row)
		}
	}
	return r
}

// The CPU-driven exchange moves every byte, in every handler put_bw has,
// and prints a consistent row per message size.
func TestRun(t *testing.T) {
	for _, h := range []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB} {
		t.Run(h.String(), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(testConfig(h), &out))
			s := out.String()
			assert.Contains(t, s, "CPU-driven put_bw (no GPU)")
			assert.Contains(t, s, "Data received correctly from client")
			assert.Contains(t, s, "0 error completions")
			r := rows(t, s)
			require.Len(t, r, 8, "sizes 1..4096:\n%s", s)
			for i, row := range r {
				assert.Equal(t, float64(sizes[i]), row[0])
				assert.Equal(t, 512.0, row[1])
				require.Positive(t, row[4], "time")
				// The table prints 6 decimals: on a loaded machine a 1-byte
				// row's Gbps is a few millionths, so allow the rounding too.
				bw, rate := row[0]*row[1]*8/(row[4]*1e6), row[1]/(row[4]*1e3)
				assert.InDelta(t, bw, row[2], 0.01*bw+1e-6, "BW of row %d", i)
				assert.InDelta(t, rate, row[3], 0.01*rate+1e-6, "rate of row %d", i)
			}
		})
	}
}

// A wrong rkey makes the server's NIC refuse the writes: the device code
// returns the error completions, run fails and names them, and nothing is
// validated or leaked.
func TestRunErrorCompletions(t *testing.T) {
	cfg := testConfig(gpunetio.NICHandlerGPUSMDB)
	cfg.rkeyXor = 0x100
	cfg.timeout = 5 * time.Second
	var out bytes.Buffer
	start := time.Now()
	err := run(cfg, &out)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EIO, "an error CQE: %v", err)
	assert.Contains(t, err.Error(), "message size 1, warm-up")
	assert.NotContains(t, out.String(), "Validation successful")
	assert.Less(t, time.Since(start), 30*time.Second)
}

func TestValidate(t *testing.T) {
	bufs := []*buffer{{target: []byte{1, 1, 1}}, {target: []byte{2, 2, 2, 2}}}
	require.NoError(t, validate(bufs))
	bufs[1].target[3] = 7
	assert.EqualError(t, validate(bufs), "Validation error: buffer 1 pos 3 has invalid data 7")
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, config{iters: 2048, threads: 8, handler: gpunetio.NICHandlerAuto, maxSize: 65536, server: "emu0", client: "emu1", timeout: 30 * time.Second}, cfg)
	cfg, err = parseFlags([]string{"-i", "1024", "-p", "1", "-threads", "2", "-max-size", "1048576"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, gpunetio.NICHandlerCPUProxy, cfg.handler)
	assert.Equal(t, 1024, cfg.iters)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-i", "100"}, "multiple of 512"},
		{[]string{"-i", "0"}, "multiple of 512"},
		{[]string{"-threads", "0"}, "1..512"},
		{[]string{"-threads", "513"}, "1..512"},
		{[]string{"-p", "6"}, "put_bw supports AUTO, CPU_PROXY and GPU_SM_DB"},
		{[]string{"-p", "banana"}, "banana"},
		{[]string{"-max-size", "2097152"}, "-max-size 2097152"},
		{[]string{"-timeout", "0s"}, "must be positive"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		_, err := parseFlags(tc.args, &stderr)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.msg, "%v", tc.args)
		assert.Contains(t, stderr.String(), "Usage of cpudemo", "%v", tc.args)
	}
}

// The CPU-driven two-sided exchange (twosided_bw's: the server's threads
// post receives and signal with an RDMA write, the client's send into
// them) moves every byte through receives whose ring, doorbell record and
// CQ the server's device QP holds, in every handler of the example.
func TestRunTwoSided(t *testing.T) {
	for _, h := range []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB} {
		t.Run(h.String(), func(t *testing.T) {
			var out bytes.Buffer
			cfg := testConfig(h)
			cfg.twosided = true
			require.NoError(t, runTwoSided(cfg, &out))
			s := out.String()
			assert.Contains(t, s, "CPU-driven twosided_bw (no GPU)")
			assert.Contains(t, s, "Data received correctly from client")
			assert.Contains(t, s, "0 error completions")
			r := rows(t, s)
			require.Len(t, r, 8, "sizes 1..4096:\n%s", s)
			for i, row := range r {
				assert.Equal(t, float64(sizes[i]), row[0])
				assert.Equal(t, 512.0, row[1])
				require.Positive(t, row[4], "time")
			}
		})
	}
}
