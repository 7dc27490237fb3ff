package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

func TestResultNames(t *testing.T) {
	tests := []struct {
		r    Result
		name string
	}{
		{Success, "CUDA_SUCCESS"},
		{ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE"},
		{ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{ErrorStubLibrary, "CUDA_ERROR_STUB_LIBRARY"},
		{ErrorNoDevice, "CUDA_ERROR_NO_DEVICE"},
		{ErrorInvalidPTX, "CUDA_ERROR_INVALID_PTX"},
		{ErrorNotFound, "CUDA_ERROR_NOT_FOUND"},
		{ErrorNotReady, "CUDA_ERROR_NOT_READY"},
		{ErrorHostMemoryAlreadyRegistered, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
		{ErrorHostMemoryNotRegistered, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
		{ErrorNotSupported, "CUDA_ERROR_NOT_SUPPORTED"},
		{ErrorUnknown, "CUDA_ERROR_UNKNOWN"},
		{Result(123456), "CUDA_ERROR_123456"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.name, tc.r.Name())
		require.Equal(t, fmt.Sprintf("%s (%d)", tc.name, int(tc.r)), tc.r.Error())
	}
	// Every built-in name is the CUDA spelling of a distinct code.
	seen := map[string]Result{}
	for r, n := range resultNames {
		require.Regexp(t, `^CUDA_(SUCCESS|ERROR_[A-Z0-9_]+)$`, n)
		prev, dup := seen[n]
		require.False(t, dup, "%s for %d and %d", n, r, prev)
		seen[n] = r
	}
}

func TestErrorFormatAndIs(t *testing.T) {
	e := &Error{Op: "cuMemAlloc_v2", Result: ErrorOutOfMemory}
	var err error = fmt.Errorf("4096 bytes: %w", e)
	require.Contains(t, err.Error(), "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)")
	require.ErrorIs(t, err, ErrorOutOfMemory)
	require.NotErrorIs(t, err, ErrorInvalidValue)
	require.NotErrorIs(t, err, ErrNoDevice)
	require.NotErrorIs(t, err, ErrNoDriver)
	var got *Error
	require.True(t, errors.As(err, &got))
	require.Equal(t, "cuMemAlloc_v2", got.Op)
	var r Result
	require.True(t, errors.As(err, &r))
	require.Equal(t, ErrorOutOfMemory, r)

	require.ErrorIs(t, &Error{Op: "cuInit", Result: ErrorNoDevice}, ErrNoDevice)
	require.ErrorIs(t, &Error{Op: "cuInit", Result: ErrorStubLibrary}, ErrNoDriver)

	d := &Error{Op: "cuModuleLoadDataEx", Result: ErrorInvalidPTX, Detail: "ptxas: line 3: syntax error"}
	require.Contains(t, d.Error(), "CUDA_ERROR_INVALID_PTX (218)")
	require.Contains(t, d.Error(), "ptxas: line 3: syntax error")
}

func TestCheckStages(t *testing.T) {
	require.NoError(t, check("cuMemAlloc_v2", 0))
	tests := []struct {
		code int32
		op   string
		r    Result
	}{
		{2, "cuMemAlloc_v2", ErrorOutOfMemory},
		{cudasys.StagePush | 201, "cuCtxPushCurrent_v2 (for cuMemAlloc_v2)", ErrorInvalidContext},
		{cudasys.StagePop | 201, "cuCtxPopCurrent_v2 (after cuMemAlloc_v2)", ErrorInvalidContext},
	}
	for _, tc := range tests {
		err := check("cuMemAlloc_v2", tc.code)
		var e *Error
		require.True(t, errors.As(err, &e))
		require.Equal(t, tc.op, e.Op)
		require.Equal(t, tc.r, e.Result)
	}
}
