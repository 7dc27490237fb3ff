package gpurun

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/stretchr/testify/assert"
)

var testProg = common.Program{Name: "put_bw", Kernel: "put_bw_kernel.fatbin", ExecScope: true, IterMult: common.BWThreads,
	Handlers: []gpunetio.NICHandler{gpunetio.NICHandlerAuto}}

func TestMainExitStatus(t *testing.T) {
	roleErr := errors.New("role failed")
	tests := []struct {
		name       string
		args       []string
		role       error
		called     bool
		status     int
		wantStderr string
	}{
		{"help", []string{"-h"}, nil, false, 0, "Usage: put_bw"},
		{"bad flag", []string{"-i", "3"}, nil, false, 1, "multiple of 512"},
		{"role error", nil, roleErr, true, 1, "put_bw server: role failed\nSample finished with errors"},
		{"success", []string{"-c", "127.0.0.1"}, nil, true, 0, "Sample finished successfully"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			called := false
			st := Main(testProg, tc.args, &stdout, &stderr, func(ctx context.Context, cfg common.Config) error {
				called = true
				assert.NoError(t, ctx.Err())
				return tc.role
			})
			assert.Equal(t, tc.status, st)
			assert.Equal(t, tc.called, called)
			assert.Contains(t, stderr.String(), tc.wantStderr)
			assert.Empty(t, stdout.String())
		})
	}
}

func TestMainNoGPUMessage(t *testing.T) {
	var stderr bytes.Buffer
	st := Main(testProg, []string{"-d", "emu0", "-timeout", "1s"}, &bytes.Buffer{}, &stderr, func(ctx context.Context, cfg common.Config) error {
		return errors.Join(ErrNoGPU, errors.New("cuInit: CUDA_ERROR_NO_DEVICE"))
	})
	assert.Equal(t, 1, st)
	assert.True(t, strings.Contains(stderr.String(), "needs an NVIDIA GPU") && strings.Contains(stderr.String(), "make test"), stderr.String())
}

func TestCloseNilAndPartialEnv(t *testing.T) {
	var e *Env
	assert.NoError(t, e.Close())
	e = &Env{}
	assert.NoError(t, e.Close())
	assert.NoError(t, e.Close())
	e = &Env{abandoned: true}
	assert.ErrorIs(t, e.Close(), ErrAbandoned)
}
