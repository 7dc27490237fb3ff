package common

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewBWRow(t *testing.T) {
	tests := []struct {
		bytes        uint64
		iters        uint32
		kernel       time.Duration
		gbps, mpps   float64
		wantKernelMs float64
	}{
		// 1 MiB x 2048 in 1 s: 2^31 bytes/s = 17.179869184 Gbit/s, 0.002048 Mpps.
		{1 << 20, 2048, time.Second, 17.179869184, 0.002048, 1000},
		// 64 B x 512 in 1 ms: 262.144 Mbit/s, 0.512 Mpps.
		{64, 512, time.Millisecond, 0.262144, 0.512, 1},
		{64, 512, 0, 0, 0, 0},
	}
	for _, tc := range tests {
		r := NewBWRow(tc.bytes, tc.iters, tc.kernel)
		assert.InDelta(t, tc.gbps, r.BWGbps, 1e-9, "%+v", tc)
		assert.InDelta(t, tc.mpps, r.MsgRateMpps, 1e-12, "%+v", tc)
		assert.InDelta(t, tc.wantKernelMs, r.KernelMs, 1e-12)
		assert.Equal(t, tc.bytes, r.Bytes)
		assert.Equal(t, tc.iters, r.Iterations)
	}
}

func TestNewLatRow(t *testing.T) {
	r := NewLatRow(64, 1000, 10*time.Millisecond)
	assert.InDelta(t, 10000.0, r.KernelUs, 1e-9)
	assert.InDelta(t, 10.0, r.RoundTripUs, 1e-9)
	assert.InDelta(t, 5.0, r.OneWayUs, 1e-9)
	z := NewLatRow(64, 0, time.Millisecond)
	assert.Zero(t, z.OneWayUs)
	assert.False(t, math.IsInf(z.RoundTripUs, 0))
}

func TestTablesText(t *testing.T) {
	var b bytes.Buffer
	WriteBWHeader(&b)
	WriteBWRow(&b, BWRow{Bytes: 64, Iterations: 2048, BWGbps: 1.5, MsgRateMpps: 2.25, KernelMs: 0.125})
	lines := strings.Split(b.String(), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, strings.Repeat("-", 84), lines[0])
	assert.Equal(t, lines[0], lines[2])
	assert.Equal(t, " #bytes     #iterations    BW average[Gbps]   MsgRate[Mpps]    CUDA Kernel[ms]", lines[1])
	assert.Equal(t, " 64         \t2048              1.500000            2.250000            0.125000", lines[3])
	assert.Equal(t, "", lines[4])

	b.Reset()
	WriteLatHeader(&b)
	WriteLatRow(&b, LatRow{Bytes: 16384, Iterations: 2048, OneWayUs: 3.456, RoundTripUs: 6.912, KernelUs: 14155.776})
	lines = strings.Split(b.String(), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, strings.Repeat("-", 94), lines[0])
	assert.Equal(t, " #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    CUDA Kernel[usec]", lines[1])
	assert.Equal(t, " 16384   \t\t2048             3.46          \t\t6.91       \t \t14155.78", lines[3])
}

func sampleReport() *Report {
	return &Report{Program: "put_bw", Role: "client", Device: "emu1", GPU: "0000:8a:00.0", NICHandler: "GPU_SM_DB",
		ExecScope: "warp", Iterations: 512,
		BW: []BWRow{NewBWRow(1, 512, time.Millisecond), NewBWRow(64, 512, 2*time.Millisecond)}}
}

func TestReportJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteJSON(&b))
	var got map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, "put_bw", got["program"])
	assert.Equal(t, "warp", got["exec_scope"])
	rows := got["bandwidth"].([]any)
	require.Len(t, rows, 2)
	row := rows[1].(map[string]any)
	assert.Equal(t, 64.0, row["bytes"])
	assert.InDelta(t, 2.0, row["kernel_ms"], 1e-12)
	assert.NotContains(t, got, "latency")
	assert.NotContains(t, got, "validation")

	var back Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, *sampleReport(), back)
}

func TestReportCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport().WriteCSV(&b))
	recs, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, []string{"program", "role", "device", "gpu", "nic_handler", "exec_scope", "bytes", "iterations", "bw_gbps", "msg_rate_mpps", "kernel_ms"}, recs[0])
	assert.Equal(t, []string{"put_bw", "client", "emu1", "0000:8a:00.0", "GPU_SM_DB", "warp", "64", "512", "0.131072", "0.256", "2"}, recs[2])

	lat := &Report{Program: "write_lat", Role: "server", Lat: []LatRow{NewLatRow(8, 4, 8*time.Microsecond)}}
	b.Reset()
	require.NoError(t, lat.WriteCSV(&b))
	recs, err = csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "unidirectional_usec", recs[0][8])
	assert.Equal(t, []string{"8", "4", "1", "2", "8"}, recs[1][6:])
}

func TestReportSave(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []Format{FormatJSON, FormatCSV} {
		p := filepath.Join(dir, "r."+string(f))
		require.NoError(t, sampleReport().Save(p, f))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Contains(t, string(b), "put_bw")
	}
	err := sampleReport().Save(filepath.Join(dir, "x"), Format("xml"))
	assert.ErrorIs(t, err, ErrUsage)
	_, statErr := os.Stat(filepath.Join(dir, "x"))
	assert.True(t, os.IsNotExist(statErr))
	err = sampleReport().Save(filepath.Join(dir, "missing", "r.json"), FormatJSON)
	assert.ErrorIs(t, err, os.ErrNotExist)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary files left behind")
	assert.Equal(t, ".", dirOf("a.json"))
	assert.Equal(t, "/", dirOf("/a.json"))
	assert.Equal(t, "x/y", dirOf("x/y/a.json"))
}

func TestValidate(t *testing.T) {
	good := [][]byte{bytes.Repeat([]byte{1}, 512), bytes.Repeat([]byte{2}, 1024), {}}
	assert.NoError(t, Validate(good))
	bad := [][]byte{bytes.Repeat([]byte{1}, 512), bytes.Repeat([]byte{2}, 1024)}
	bad[1][700] = 0
	err := Validate(bad)
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, ValidationError{Buffer: 1, Pos: 700, Value: 0}, *ve)
	assert.Equal(t, "Validation error: buffer 1 pos 700 has invalid data 0", err.Error())
	assert.Contains(t, ValidationOK, "Data received correctly from client")
	// The pattern wraps at 256 sizes like a byte does.
	many := make([][]byte, 257)
	for i := range many {
		many[i] = []byte{byte(i + 1)}
	}
	assert.NoError(t, Validate(many))
}
