package main

import (
	"bytes"
	"fmt"
	"os"
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

func latConfig(h gpunetio.NICHandler, iters int) config {
	cfg := testConfig(h)
	cfg.twosidedLat = true
	cfg.iters = iters
	cfg.maxSize = 16384
	return cfg
}

// The CPU-driven ping-pong (twosided_lat's: SEND, reply, receives posted
// by both sides' device code, RNR retry 0) completes every round trip of
// every size, warm-ups included, in every handler of the example, the
// server checking every message; one round trip a launch too, where every
// launch runs on the receives the one before it posted.
func TestRunTwoSidedLat(t *testing.T) {
	for _, tc := range []struct {
		h     gpunetio.NICHandler
		iters int
	}{
		{gpunetio.NICHandlerAuto, 24},
		{gpunetio.NICHandlerCPUProxy, 6},
		{gpunetio.NICHandlerGPUSMDB, 24},
		{gpunetio.NICHandlerAuto, 1},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.h, tc.iters), func(t *testing.T) {
			var out bytes.Buffer
			res, err := twoSidedLat(latConfig(tc.h, tc.iters), &out)
			require.NoError(t, err, out.String())
			s := out.String()
			assert.Contains(t, s, "CPU-driven twosided_lat (no GPU)")
			assert.Contains(t, s, "Data received correctly from client")
			assert.Contains(t, s, "0 error completions, no RNR")
			assert.Equal(t, latSizes, res.sizes)
			assert.Equal(t, 2*len(latSizes), res.launches)
			total := uint64(2 * len(latSizes) * tc.iters)
			assert.Equal(t, total, res.checked, "messages the server checked")
			assert.Equal(t, total, res.replies, "replies the client received")
			r := rows(t, s)
			require.Len(t, r, len(latSizes), s)
			for i, row := range r {
				assert.Equal(t, float64(latSizes[i]), row[0])
				assert.Equal(t, float64(tc.iters), row[1])
				require.Positive(t, row[2], "one way")
				assert.InDelta(t, 2*row[2], row[3], 0.02, "round trip of row %d", i)
				assert.InDelta(t, row[4]/float64(tc.iters), row[3], 0.01+0.01*row[3], "wall time of row %d", i)
			}
		})
	}
}

// A wrong byte in one message is found by the server's check, named as the
// example names it, and does not stop the exchange.
func TestRunTwoSidedLatDetectsCorruption(t *testing.T) {
	const iters = 8
	cfg := latConfig(gpunetio.NICHandlerGPUSMDB, iters)
	cfg.maxSize = 256
	cfg.latCorrupt = 3*iters + 3 // size 64 (index 1), its measured launch, third message
	var out bytes.Buffer
	res, err := twoSidedLat(cfg, &out)
	want := &validationError{buffer: 1, pos: 32, value: latPattern(cfg.latCorrupt, 64, 32) ^ 0x5a}
	var ve *validationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, want, ve)
	assert.Contains(t, out.String(), want.Error())
	assert.NotContains(t, out.String(), "Validation successful")
	assert.Equal(t, uint64(2*4*iters), res.checked, "every message still exchanged")
}

// A SEND that reaches the server before its receive is posted fails the run
// (RNR retry 0) instead of being retried: the demo's clean runs show the
// receives come first.
func TestRunTwoSidedLatSendWithoutReceive(t *testing.T) {
	cfg := latConfig(gpunetio.NICHandlerAuto, 4)
	cfg.maxSize = 1
	cfg.latNoPrepost = true
	cfg.timeout = 2 * time.Second
	start := time.Now()
	var out bytes.Buffer
	_, err := twoSidedLat(cfg, &out)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EIO, "the client's SEND completes in error: %v", err)
	assert.NotContains(t, out.String(), "Validation successful")
	assert.Less(t, time.Since(start), 30*time.Second)
}

// latPattern is the example kernel's payload function.
func TestLatPattern(t *testing.T) {
	src, err := os.ReadFile("../../examples/twosided_lat/kernel.cu")
	require.NoError(t, err)
	assert.Contains(t, string(src), "return (uint8_t)((uint32_t)seq * 3u + (((uint32_t)size * 2654435761u) >> 24));")
	assert.Contains(t, string(src), "#define TWOSIDED_LAT_THREADS 32u")
	assert.Equal(t, byte(158+3), latPattern(1, 1, 0))
	assert.Equal(t, byte(141+6+10), latPattern(2, 64, 10))
	for _, size := range latSizes {
		assert.LessOrEqual(t, size, uint64(latStride))
		assert.NotEqual(t, latPattern(5, size, 7), latPattern(3, size, 7), "a message and the one two before it in the same half")
	}
}

func TestParseFlagsTwoSidedLat(t *testing.T) {
	cfg, err := parseFlags([]string{"-twosided-lat", "-i", "100", "-p", "2"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.True(t, cfg.twosidedLat)
	assert.Equal(t, 100, cfg.iters)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-twosided-lat", "-i", "0"}, "must be positive"},
		{[]string{"-twosided-lat", "-twosided"}, "choose one"},
		{[]string{"-i", "100"}, "multiple of 512"},
	} {
		var stderr bytes.Buffer
		_, err := parseFlags(tc.args, &stderr)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, stderr.String(), tc.msg, "%v", tc.args)
	}
}
