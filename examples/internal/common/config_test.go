package common

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	testPutBW = Program{Name: "put_bw", Kernel: "put_bw_kernel.fatbin", ExecScope: true, IterMult: BWThreads,
		Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB}}
	testWriteBW = Program{Name: "write_bw", Kernel: "write_bw_kernel.fatbin", IterMult: BWThreads, MaxIters: SQWQEs,
		Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB}}
	testWriteLat = Program{Name: "write_lat", Kernel: "write_lat_kernel.fatbin", DBRMode: true,
		Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB, gpunetio.NICHandlerGPUSMBF, gpunetio.NICHandlerGPUSMNoDBR}}
)

func TestParseDefaults(t *testing.T) {
	for _, p := range []Program{testPutBW, testWriteBW, testWriteLat} {
		t.Run(p.Name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := Parse(p, nil, &stderr)
			require.NoError(t, err)
			assert.Empty(t, stderr.String())
			assert.Equal(t, Config{Iters: DefaultIters, Port: DefaultOOBPort, Timeout: 60 * time.Second}, cfg)
			assert.False(t, cfg.IsClient())
			assert.Equal(t, "server", cfg.Role())
		})
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name string
		p    Program
		args []string
		want Config
	}{
		{"put_bw client warp proxy", testPutBW,
			[]string{"-c", "10.0.0.1", "-d", "mlx5_0", "-g", "8A:00.0", "-e", "1", "-p", "1", "-i", "1024", "-l", "3"},
			Config{Server: "10.0.0.1", Device: "mlx5_0", GPU: "8A:00.0", ExecScope: gpunetio.ExecScopeWarp,
				Handler: gpunetio.NICHandlerCPUProxy, Iters: 1024, GIDIndex: 3, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"put_bw names", testPutBW, []string{"-e", "warp", "-p", "gpu_sm_db"},
			Config{ExecScope: gpunetio.ExecScopeWarp, Handler: gpunetio.NICHandlerGPUSMDB, Iters: DefaultIters, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"write_bw -l accepted", testWriteBW, []string{"-l", "1", "-i", "512"},
			Config{GIDIndex: 1, Iters: 512, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"write_lat bf no-dbr-hw", testWriteLat, []string{"-p", "6", "-r", "1", "-i", "7"},
			Config{Handler: gpunetio.NICHandlerGPUSMBF, DBRMode: gpunetio.SendNoDBRHW, Iters: 7, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"write_lat no-dbr names", testWriteLat, []string{"-p", "GPU_SM_NO_DBR", "-r", "no_dbr_sw_emulated"},
			Config{Handler: gpunetio.NICHandlerGPUSMNoDBR, DBRMode: gpunetio.SendNoDBRSWEmulated, Iters: DefaultIters, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"extras", testPutBW, []string{"-o", "r.JSON", "--non-interactive", "-port", "2345", "-timeout", "5s", "-k", "/x.fatbin"},
			Config{Output: "r.JSON", Format: FormatJSON, NonInteractive: true, Port: 2345, Timeout: 5 * time.Second, Kernel: "/x.fatbin", Iters: DefaultIters}},
		{"csv short -n", testWriteLat, []string{"-o", "out.csv", "-n"},
			Config{Output: "out.csv", Format: FormatCSV, NonInteractive: true, Iters: DefaultIters, Port: DefaultOOBPort, Timeout: time.Minute}},
		{"format override", testWriteLat, []string{"-o", "out.txt", "-format", "JSON"},
			Config{Output: "out.txt", Format: FormatJSON, Iters: DefaultIters, Port: DefaultOOBPort, Timeout: time.Minute}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := Parse(tc.p, tc.args, &stderr)
			require.NoError(t, err, stderr.String())
			assert.Equal(t, tc.want, cfg)
			assert.Equal(t, tc.want.Server != "", cfg.IsClient())
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		p    Program
		args []string
		msg  string
	}{
		{"iters not multiple", testPutBW, []string{"-i", "1000"}, "multiple of 512"},
		{"iters zero", testWriteLat, []string{"-i", "0"}, "positive integer"},
		{"iters junk", testWriteLat, []string{"-i", "x"}, "positive integer"},
		{"write_bw iters beyond SQ", testWriteBW, []string{"-i", "2560"}, "at most 2048"},
		{"bf in put_bw", testPutBW, []string{"-p", "6"}, "NIC handler BlueFlame not supported in this example"},
		{"bf in write_bw", testWriteBW, []string{"-p", "GPU_SM_BF"}, "BlueFlame not supported"},
		{"no-dbr in put_bw", testPutBW, []string{"-p", "10"}, "GPU_SM_NO_DBR not supported"},
		{"unknown handler", testWriteLat, []string{"-p", "3"}, "not a NIC handler"},
		{"scope", testPutBW, []string{"-e", "2"}, "exec scope must be 0 (thread) or 1 (warp)"},
		{"-e in write_bw", testWriteBW, []string{"-e", "0"}, "flag provided but not defined: -e"},
		{"-r in put_bw", testPutBW, []string{"-r", "0"}, "flag provided but not defined: -r"},
		{"dbr mode", testWriteLat, []string{"-r", "3"}, "DBREC mode must be"},
		{"gid", testWriteLat, []string{"-l", "256"}, "GID index"},
		{"port", testWriteLat, []string{"-port", "0"}, "TCP port"},
		{"timeout", testWriteLat, []string{"-timeout", "-1s"}, "must be positive"},
		{"format without -o", testWriteLat, []string{"-format", "csv"}, "without -o"},
		{"bad format", testWriteLat, []string{"-o", "a.json", "-format", "xml"}, "want json or csv"},
		{"bad extension", testWriteLat, []string{"-o", "a.txt"}, "cannot tell the format"},
		{"positional", testWriteLat, []string{"extra"}, "unexpected argument"},
		{"missing value", testWriteLat, []string{"-c"}, "flag needs an argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := Parse(tc.p, tc.args, &stderr)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrUsage)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, stderr.String(), tc.msg)
			assert.Contains(t, stderr.String(), "Usage: "+tc.p.Name)
		})
	}
}

func TestParseHelp(t *testing.T) {
	for _, p := range []Program{testPutBW, testWriteBW, testWriteLat} {
		for _, h := range []string{"-h", "--help"} {
			var stderr bytes.Buffer
			_, err := Parse(p, []string{h}, &stderr)
			require.True(t, errors.Is(err, flag.ErrHelp), "%s %s: %v", p.Name, h, err)
			out := stderr.String()
			for _, want := range []string{"-c <server_ip> (Client only)", "-d <mlx5_X device name>", "-g <GPU PCIe address>",
				"-i <number of iterations (default: 2048)", "-l <GID Index (default: 0)>", "-p <NIC handler. 0: AUTO 1: CPU_PROXY 2: GPU_SM_DB",
				"-o <file.json|file.csv>", "--non-interactive", p.Kernel} {
				assert.Contains(t, out, want, p.Name)
			}
			assert.Equal(t, p.ExecScope, strings.Contains(out, "-e <exec scope"), p.Name)
			assert.Equal(t, p.DBRMode, strings.Contains(out, "-r <DBREC mode"), p.Name)
			assert.Equal(t, containsHandler(p.Handlers, gpunetio.NICHandlerGPUSMBF), strings.Contains(out, "6: GPU_SM_BF"), p.Name)
		}
	}
}

func TestParseNoKernelName(t *testing.T) {
	p := testWriteLat
	p.Kernel = ""
	_, err := Parse(p, nil, &bytes.Buffer{})
	assert.ErrorIs(t, err, ErrUsage)
}

func TestAlignUp(t *testing.T) {
	for _, tc := range []struct{ n, a, want uint64 }{{0, 4096, 0}, {1, 4096, 4096}, {4096, 4096, 4096}, {4097, 4096, 8192}, {512, 64, 512}} {
		assert.Equal(t, tc.want, AlignUp(tc.n, tc.a), "%d/%d", tc.n, tc.a)
	}
	assert.Len(t, BWSizes, 16)
	assert.Len(t, LatSizes, 10)
}
