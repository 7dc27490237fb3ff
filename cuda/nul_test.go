package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/peerproc"
)

// noNVRTCChildEnv marks the child process of TestCompileNULWithoutNVRTC.
const noNVRTCChildEnv = "GPUNETIO_CUDA_TEST_NUL_CHILD"

// nulCase is one Compile input holding a NUL byte.
type nulCase struct {
	input  string // InputError.Input
	offset int
	source string
	name   string
	opts   CompileOptions
}

func nulCases() []nulCase {
	good := "extern \"C\" __global__ void k() {}\n"
	return []nulCase{
		{input: "source", offset: len(good), source: good + "\x00#error never seen\n"},
		{input: "program name", offset: 4, source: good, name: "prog\x00.cu"},
		{input: "architecture", offset: 5, source: good, opts: CompileOptions{Arch: "sm_90\x00"}},
		{input: "define 1", offset: 1, source: good, opts: CompileOptions{Defines: []string{"A=1", "B\x00=2"}}},
		{input: "flag 0", offset: 2, source: good, opts: CompileOptions{Flags: []string{"-G\x00-lineinfo"}}},
		{input: "name expression 0", offset: 1, source: good, opts: CompileOptions{NameExpressions: []string{"k\x00"}}},
		{input: `header name "a\x00.h"`, offset: 1, source: good, opts: CompileOptions{Headers: map[string][]byte{"a\x00.h": []byte("int x;")}}},
		{input: `text of header "b.h"`, offset: 6, source: good, opts: CompileOptions{Headers: map[string][]byte{"b.h": []byte("int x;\x00#error hidden")}}},
	}
}

// checkNULCases compiles every case and checks the *InputError naming the
// input and the offset; it is the same whether NVRTC can be loaded or not,
// because the check comes before loading it.
func checkNULCases(t *testing.T) {
	for _, tc := range nulCases() {
		_, err := Compile(tc.source, tc.name, &tc.opts)
		require.ErrorIs(t, err, ErrInvalidInput, tc.input)
		require.False(t, errors.Is(err, ErrNoNVRTC), "%s: refused before loading NVRTC", tc.input)
		var ie *InputError
		require.True(t, errors.As(err, &ie), tc.input)
		require.Equal(t, tc.input, ie.Input)
		require.Equal(t, tc.offset, ie.Offset, tc.input)
		require.Contains(t, err.Error(), fmt.Sprintf("%s: NUL byte (C would end the string there) at byte offset %d", tc.input, tc.offset))
	}
}

// TestCompileNUL checks every Compile input with a NUL byte in this
// process, where NVRTC loads when the host has it (the GPU hosts do).
func TestCompileNUL(t *testing.T) {
	_, nvrtcErr := NVRTCLibrary()
	t.Logf("NVRTC present: %v", nvrtcErr == nil)
	checkNULCases(t)
}

// TestCompileNULWithoutNVRTC re-runs the NUL checks in a child process
// whose NVRTC library does not exist.
func TestCompileNULWithoutNVRTC(t *testing.T) {
	if os.Getenv(noNVRTCChildEnv) != "" {
		_, err := NVRTCLibrary()
		require.ErrorIs(t, err, ErrNoNVRTC, "the child has no NVRTC")
		checkNULCases(t)
		_, err = Compile("x", "x.cu", nil)
		require.ErrorIs(t, err, ErrNoNVRTC, "a clean input reaches the loader")
		return
	}
	peerproc.RunTests(t, []string{noNVRTCChildEnv + "=1", NVRTCEnv + "=/nonexistent/libnvrtc-gpunetio-absent.so"},
		"TestCompileNULWithoutNVRTC")
}

// FuzzCompileInputs checks that every input of Compile is either refused
// as invalid (and then holds a NUL byte at the offset the error names) or
// crosses into C faithfully: each string C reads back equals the Go one,
// never a silently truncated prefix.
func FuzzCompileInputs(f *testing.F) {
	f.Add("__global__ void k() {}", "k.cu", "N=1", "-G", "h.h", "int x;", "k")
	f.Add("a\x00b", "k.cu", "", "", "", "", "")
	f.Add("src", "\x00", "X", "--std=c++20", "x\x00.h", "t", "&k")
	f.Add("src", "k.cu", "X\x00", "-G", "h.h", "\x00", "k<1>")
	f.Fuzz(func(t *testing.T, source, name, define, flag, hdrName, hdrText, expr string) {
		opts := &CompileOptions{Defines: []string{define}, Flags: []string{flag}, NameExpressions: []string{expr},
			Headers: map[string][]byte{hdrName: []byte(hdrText)}}
		if name == "" {
			name = "program.cu"
		}
		inputs := map[string]string{
			"source": source, "program name": name, "architecture": "", "define 0": define, "flag 0": flag,
			"name expression 0": expr, fmt.Sprintf("header name %q", hdrName): hdrName,
			fmt.Sprintf("text of header %q", hdrName): hdrText,
		}
		hasNUL := false
		for _, s := range inputs {
			hasNUL = hasNUL || strings.IndexByte(s, 0) >= 0
		}
		err := checkCompileInputs(source, name, opts)
		if err != nil {
			var ie *InputError
			require.True(t, errors.As(err, &ie), "%v", err)
			s, ok := inputs[ie.Input]
			require.True(t, ok, "the error names an input: %q", ie.Input)
			require.True(t, ie.Offset >= 0 && ie.Offset < len(s) && s[ie.Offset] == 0, "a NUL at offset %d of %s", ie.Offset, ie.Input)
			return
		}
		require.False(t, hasNUL, "an input with a NUL byte was accepted")
		in, err := compileInput(source, name, "", opts, &headers{})
		if err != nil {
			var ne *NVRTCError
			require.True(t, errors.As(err, &ne), "%v", err)
			return
		}
		require.Equal(t, *in, in.AsC(), "what C reads is what Go passed")
		if loadNVRTC() != nil {
			_, err := compile(source, name, opts, &headers{})
			require.ErrorIs(t, err, ErrNoNVRTC, "a clean input reaches the loader")
		}
	})
}
