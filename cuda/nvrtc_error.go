package cuda

import (
	"strconv"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// NVRTCResult is an NVRTC result code (nvrtcResult). It implements error so
// that errors.Is(err, cuda.NVRTCErrorCompilation) matches an *NVRTCError
// carrying that result.
type NVRTCResult int32

// nvrtcResult values (fact: nvrtc.h, unchanged since CUDA 11.0; later
// versions only add codes, which Name gets from the library).
const (
	NVRTCSuccess                                NVRTCResult = 0  // NVRTC_SUCCESS
	NVRTCErrorOutOfMemory                       NVRTCResult = 1  // NVRTC_ERROR_OUT_OF_MEMORY
	NVRTCErrorProgramCreationFailure            NVRTCResult = 2  // NVRTC_ERROR_PROGRAM_CREATION_FAILURE
	NVRTCErrorInvalidInput                      NVRTCResult = 3  // NVRTC_ERROR_INVALID_INPUT
	NVRTCErrorInvalidProgram                    NVRTCResult = 4  // NVRTC_ERROR_INVALID_PROGRAM
	NVRTCErrorInvalidOption                     NVRTCResult = 5  // NVRTC_ERROR_INVALID_OPTION
	NVRTCErrorCompilation                       NVRTCResult = 6  // NVRTC_ERROR_COMPILATION
	NVRTCErrorBuiltinOperationFailure           NVRTCResult = 7  // NVRTC_ERROR_BUILTIN_OPERATION_FAILURE
	NVRTCErrorNoNameExpressionsAfterCompilation NVRTCResult = 8  // NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION
	NVRTCErrorNoLoweredNamesBeforeCompilation   NVRTCResult = 9  // NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION
	NVRTCErrorNameExpressionNotValid            NVRTCResult = 10 // NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
	NVRTCErrorInternalError                     NVRTCResult = 11 // NVRTC_ERROR_INTERNAL_ERROR
)

var nvrtcNames = map[NVRTCResult]string{
	NVRTCSuccess:                                "NVRTC_SUCCESS",
	NVRTCErrorOutOfMemory:                       "NVRTC_ERROR_OUT_OF_MEMORY",
	NVRTCErrorProgramCreationFailure:            "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	NVRTCErrorInvalidInput:                      "NVRTC_ERROR_INVALID_INPUT",
	NVRTCErrorInvalidProgram:                    "NVRTC_ERROR_INVALID_PROGRAM",
	NVRTCErrorInvalidOption:                     "NVRTC_ERROR_INVALID_OPTION",
	NVRTCErrorCompilation:                       "NVRTC_ERROR_COMPILATION",
	NVRTCErrorBuiltinOperationFailure:           "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	NVRTCErrorNoNameExpressionsAfterCompilation: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
	NVRTCErrorNoLoweredNamesBeforeCompilation:   "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	NVRTCErrorNameExpressionNotValid:            "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
	NVRTCErrorInternalError:                     "NVRTC_ERROR_INTERNAL_ERROR",
}

// Name returns the nvrtcResult enum name, for example
// "NVRTC_ERROR_COMPILATION": from the built-in table, else from the loaded
// library (nvrtcGetErrorString), else "NVRTC_ERROR_<n>".
func (r NVRTCResult) Name() string {
	if s, ok := nvrtcNames[r]; ok {
		return s
	}
	if s, ok := cudasys.NVRTCErrorString(int32(r)); ok && s != "" && s != "NVRTC_ERROR unknown" {
		return s
	}
	return "NVRTC_ERROR_" + strconv.Itoa(int(r))
}

// Error implements error: the enum name and the numeric code.
func (r NVRTCResult) Error() string { return r.Name() + " (" + strconv.Itoa(int(r)) + ")" }

// NVRTCError is a failed NVRTC call: the C entry point (Op, for example
// "nvrtcCompileProgram"), its result, the program name and the program log.
// errors.Is(err, r) holds for the NVRTCResult r it carries.
type NVRTCError struct {
	// Op is the NVRTC entry point that failed.
	Op string
	// Result is the nvrtcResult it returned.
	Result NVRTCResult
	// Program is the name the program was compiled under, or "".
	Program string
	// Log is the compiler's full output for a compile error (with every
	// diagnostic and its line), or an explanation of a refused option.
	Log string
}

// Error formats "cuda: <op> (<program>): <NAME> (<code>)" followed, on the
// next lines, by the log.
func (e *NVRTCError) Error() string {
	s := "cuda: " + e.Op
	if e.Program != "" {
		s += " (" + e.Program + ")"
	}
	s += ": " + e.Result.Error()
	if e.Log != "" {
		s += ":\n" + e.Log
	}
	return s
}

// Unwrap returns the Result, so errors.Is(err, cuda.NVRTCErrorCompilation)
// works.
func (e *NVRTCError) Unwrap() error { return e.Result }
