package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/gdaki/gpunetio/internal/cudasys"
)

// NVRTCEnv is the environment variable that, when set, names the only NVRTC
// library Compile tries: a path, or a name the dynamic loader resolves.
const NVRTCEnv = "GPUNETIO_NVRTC"

// nvrtcSonames are the NVRTC sonames tried, newest first after the
// development symlink.
var nvrtcSonames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

var (
	nvrtcOnce sync.Once
	nvrtcErr  error
	nvrtcLib  string
)

// nvrtcDirs are the CUDA library directories searched after the dynamic
// loader's own path: $CUDA_HOME and $CUDA_PATH, /usr/local/cuda, then the
// versioned toolkits /usr/local/cuda-X.Y, newest first.
func nvrtcDirs() []string {
	target := map[string]string{"amd64": "x86_64-linux", "arm64": "sbsa-linux"}[runtime.GOARCH]
	var roots []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			roots = append(roots, v)
		}
	}
	roots = append(roots, "/usr/local/cuda")
	versioned, _ := filepath.Glob("/usr/local/cuda-*")
	sort.Sort(sort.Reverse(sort.StringSlice(versioned)))
	roots = append(roots, versioned...)
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, "lib64"))
		if target != "" {
			dirs = append(dirs, filepath.Join(r, "targets", target, "lib"))
		}
	}
	return dirs
}

// nvrtcCandidates lists what loadNVRTC tries, in order.
func nvrtcCandidates() []string {
	if v := os.Getenv(NVRTCEnv); v != "" {
		return []string{v}
	}
	out := append([]string(nil), nvrtcSonames...)
	for _, d := range nvrtcDirs() {
		for _, n := range nvrtcSonames {
			p := filepath.Join(d, n)
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// loadNVRTC opens the first usable NVRTC library, once per process.
func loadNVRTC() error {
	nvrtcOnce.Do(func() {
		cands := nvrtcCandidates()
		var why []string
		for _, c := range cands {
			preloadBuiltins(c)
			code, msg := cudasys.LoadNVRTC(c)
			switch code {
			case cudasys.LoadOK:
				nvrtcLib = c
				return
			case cudasys.LoadMissingSymbol:
				why = append(why, c+" lacks "+msg)
			default:
				if !strings.Contains(msg, "No such file") || len(cands) == 1 {
					why = append(why, msg)
				}
			}
		}
		detail := ""
		if len(why) > 0 {
			detail = " (" + strings.Join(why, "; ") + ")"
		}
		nvrtcErr = fmt.Errorf("cuda: NVRTC: no usable library among %s%s; install the CUDA NVRTC runtime or set %s to its path: %w",
			strings.Join(cands, ", "), detail, NVRTCEnv, ErrNoNVRTC)
	})
	return nvrtcErr
}

// preloadBuiltins opens the libnvrtc-builtins libraries beside a libnvrtc
// given by path. libnvrtc opens its builtins by soname at compile time,
// which the dynamic loader finds only on its search path; a toolkit
// directory such as /usr/local/cuda/lib64 often is not on it, and an
// already loaded library satisfies the later lookup.
func preloadBuiltins(lib string) {
	if !strings.Contains(lib, "/") {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(lib), "libnvrtc-builtins.so.*"))
	for _, m := range matches {
		cudasys.Preload(m)
	}
}

// NVRTCLibrary returns the NVRTC library in use, loading it if needed: the
// name or path it was opened by.
func NVRTCLibrary() (string, error) {
	if err := loadNVRTC(); err != nil {
		return "", err
	}
	return nvrtcLib, nil
}

// NVRTCVersion returns the version of the NVRTC library (nvrtcVersion), for
// example 12, 4.
func NVRTCVersion() (major, minor int, err error) {
	if err := loadNVRTC(); err != nil {
		return 0, 0, err
	}
	major, minor, r := cudasys.NVRTCVersion()
	if r != 0 {
		return 0, 0, &NVRTCError{Op: "nvrtcVersion", Result: NVRTCResult(r)}
	}
	return major, minor, nil
}

// NVRTCSupportedArchs returns the compute capabilities NVRTC can generate
// code for, as 10*major+minor (nvrtcGetSupportedArchs), for example
// [..., 80, 86, 87, 89, 90]. It returns nil and no error when the library
// cannot say (NVRTC before CUDA 11.2).
func NVRTCSupportedArchs() ([]int, error) {
	if err := loadNVRTC(); err != nil {
		return nil, err
	}
	archs, ok, r := cudasys.NVRTCSupportedArchs()
	if !ok {
		return nil, nil
	}
	if r != 0 {
		return nil, &NVRTCError{Op: "nvrtcGetSupportedArchs", Result: NVRTCResult(r)}
	}
	return archs, nil
}

// CompileOptions are the settings of one Compile. The zero value compiles
// for NVRTC's default virtual architecture with no extra options.
type CompileOptions struct {
	// Arch is the target architecture: "sm_90" gives a cubin for that GPU
	// and its PTX; "compute_90" gives PTX only, which the driver compiles
	// for the GPU at load time. When empty, Device decides.
	Arch string
	// Device, when Arch is empty, selects the device's own architecture
	// (sm_XY of its compute capability). When this NVRTC cannot generate
	// code for it, the newest compute_XY it supports below it is used, so
	// the driver JIT-compiles the PTX. With neither Arch nor Device set,
	// NVRTC's default virtual architecture is used.
	Device *Device
	// Defines are passed as -D options, in order: "NAME" or "NAME=VALUE".
	Defines []string
	// Headers are extra in-memory headers by the exact name the source
	// includes them with. They take precedence over the embedded device
	// headers of the same name.
	Headers map[string][]byte
	// NameExpressions are C++ names whose mangled (lowered) names the
	// result reports, for kernels that are not extern "C", for example
	// "my_kernel<64>" or "&ns::put" (nvrtcAddNameExpression).
	NameExpressions []string
	// Flags are passed to NVRTC after the options above, verbatim, for
	// example "-lineinfo", "-G" or "--std=c++20". Without a -std/--std
	// flag the dialect is C++17, which the device headers need (some NVRTC
	// versions default to C++03).
	Flags []string
}

// Compiled is the output of Compile.
type Compiled struct {
	// Name is the program name given to Compile (it appears in the log).
	Name string
	// Arch is the architecture compiled for ("" for NVRTC's default).
	Arch string
	// PTX is the generated PTX text (without a terminating NUL).
	PTX []byte
	// CUBIN is the generated cubin for an sm_XY architecture; nil for a
	// compute_XY one, and with NVRTC before CUDA 11.1.
	CUBIN []byte
	// Log holds the compiler's warnings, or "".
	Log string
	// LoweredNames maps each CompileOptions.NameExpressions entry to the
	// symbol name Module.Function takes.
	LoweredNames map[string]string
}

// Image returns what Context.ModuleLoadData should load: the cubin when
// there is one, else the PTX.
func (c *Compiled) Image() []byte {
	if c == nil {
		return nil
	}
	if len(c.CUBIN) > 0 {
		return c.CUBIN
	}
	return c.PTX
}

// Compile compiles CUDA C++ source with NVRTC (libnvrtc, loaded at run
// time: see NVRTCEnv). name is the program's file name in diagnostics, for
// example "put.cu". The device headers embedded in this package are always
// available under every include style cuda/README.md documents
// (<doca_gpunetio_device.h>, <device/doca_gpunetio_dev_verbs_qp.cuh>,
// <doca_gpunetio_dev_verbs_qp.cuh>, ...) with no include path.
//
// A NUL byte in any input (the source, name, a header's name or text, a
// define, a flag, a name expression, the architecture) is refused before
// NVRTC is loaded with an *InputError naming the input and the byte offset
// (errors.Is(err, ErrInvalidInput)), since C would read the string only up
// to it. Without an NVRTC library the error matches ErrNoNVRTC. A failed call
// returns *NVRTCError; for a compile error its Log holds the compiler's
// full output, which the error text includes.
func Compile(source, name string, opts *CompileOptions) (*Compiled, error) {
	return compile(source, name, opts, headerTable())
}

// compile is Compile against the given header table.
func compile(source, name string, opts *CompileOptions, t *headers) (*Compiled, error) {
	if opts == nil {
		opts = &CompileOptions{}
	}
	if name == "" {
		name = "program.cu"
	}
	if err := checkCompileInputs(source, name, opts); err != nil {
		return nil, err
	}
	if err := loadNVRTC(); err != nil {
		return nil, err
	}
	arch, err := compileArch(opts)
	if err != nil {
		return nil, err
	}
	in, err := compileInput(source, name, arch, opts, t)
	if err != nil {
		return nil, err
	}
	out := cudasys.NVRTCCompile(in)
	if out.Result == cudasys.NVRTCNotLoaded {
		return nil, fmt.Errorf("cuda: %s (%s): NVRTC entry point not loaded: %w", out.Op, name, ErrNoNVRTC)
	}
	if out.Result != 0 {
		return nil, &NVRTCError{Op: out.Op, Result: NVRTCResult(out.Result), Program: name, Log: strings.TrimSpace(out.Log)}
	}
	c := &Compiled{
		Name:  name,
		Arch:  arch,
		PTX:   bytes.TrimRight(out.PTX, "\x00"),
		CUBIN: out.CUBIN,
		Log:   strings.TrimSpace(out.Log),
	}
	if len(opts.NameExpressions) > 0 {
		c.LoweredNames = make(map[string]string, len(opts.NameExpressions))
		for i, e := range opts.NameExpressions {
			c.LoweredNames[e] = out.Lowered[i]
		}
	}
	return c, nil
}

// checkCompileInputs refuses, before NVRTC is loaded, every string of a
// compilation that would not cross into C whole: a NUL byte anywhere in
// the source, the program name, a header's name or text, a define, a flag,
// a name expression or the architecture. The error names the input and the
// byte offset.
func checkCompileInputs(source, name string, opts *CompileOptions) error {
	const op = "Compile"
	if err := checkCString(op, "source", source); err != nil {
		return err
	}
	if err := checkCString(op, "program name", name); err != nil {
		return err
	}
	if err := checkCString(op, "architecture", opts.Arch); err != nil {
		return err
	}
	for i, d := range opts.Defines {
		if err := checkCString(op, fmt.Sprintf("define %d", i), d); err != nil {
			return err
		}
	}
	for i, f := range opts.Flags {
		if err := checkCString(op, fmt.Sprintf("flag %d", i), f); err != nil {
			return err
		}
	}
	for i, e := range opts.NameExpressions {
		if err := checkCString(op, fmt.Sprintf("name expression %d", i), e); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(opts.Headers))
	for n := range opts.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := checkCString(op, fmt.Sprintf("header name %q", n), n); err != nil {
			return err
		}
		if i := bytes.IndexByte(opts.Headers[n], 0); i >= 0 {
			return &InputError{Op: op, Input: fmt.Sprintf("text of header %q", n), Offset: i, Reason: "NUL byte (C would end the string there)"}
		}
	}
	return nil
}

// compileInput builds the NVRTC input of a compilation whose strings
// checkCompileInputs accepted.
func compileInput(source, name, arch string, opts *CompileOptions, t *headers) (*cudasys.NVRTCInput, error) {
	var args []string
	if arch != "" {
		args = append(args, "--gpu-architecture="+arch)
	}
	for _, d := range opts.Defines {
		if d == "" || strings.HasPrefix(d, "=") {
			return nil, &NVRTCError{Op: "nvrtcCompileProgram", Result: NVRTCErrorInvalidOption, Program: name,
				Log: fmt.Sprintf("define %q has no name", d)}
		}
		args = append(args, "-D"+d)
	}
	if !hasStdFlag(opts.Flags) {
		// Some NVRTC builds default to C++03; the device headers need C++17,
		// as nvcc builds them.
		args = append(args, "--std=c++17")
	}
	args = append(args, opts.Flags...)
	for _, e := range opts.NameExpressions {
		if e == "" {
			return nil, &NVRTCError{Op: "nvrtcAddNameExpression", Result: NVRTCErrorNameExpressionNotValid, Program: name,
				Log: "empty name expression"}
		}
	}

	in := &cudasys.NVRTCInput{Source: source, Name: name, Options: args, NameExpressions: opts.NameExpressions}
	for i, n := range t.names {
		if _, mine := opts.Headers[n]; !mine {
			in.HeaderNames = append(in.HeaderNames, n)
			in.Headers = append(in.Headers, t.contents[i])
		}
	}
	user := make([]string, 0, len(opts.Headers))
	for n := range opts.Headers {
		user = append(user, n)
	}
	sort.Strings(user)
	for _, n := range user {
		in.HeaderNames = append(in.HeaderNames, n)
		in.Headers = append(in.Headers, string(opts.Headers[n]))
	}
	return in, nil
}

// hasStdFlag reports whether flags choose the C++ dialect themselves.
func hasStdFlag(flags []string) bool {
	for _, f := range flags {
		if strings.HasPrefix(f, "-std") || strings.HasPrefix(f, "--std") {
			return true
		}
	}
	return false
}

// compileArch picks the --gpu-architecture value for opts.
func compileArch(opts *CompileOptions) (string, error) {
	if opts.Arch != "" {
		if strings.ContainsAny(opts.Arch, " \t\n=") {
			return "", &NVRTCError{Op: "nvrtcCompileProgram", Result: NVRTCErrorInvalidOption, Log: fmt.Sprintf("architecture %q", opts.Arch)}
		}
		return opts.Arch, nil
	}
	if opts.Device == nil {
		return "", nil
	}
	major, minor, err := opts.Device.ComputeCapability()
	if err != nil {
		return "", fmt.Errorf("cuda: Compile: architecture of the device: %w", err)
	}
	archs, err := NVRTCSupportedArchs()
	if err != nil {
		return "", err
	}
	return pickArch(major*10+minor, archs)
}

// pickArch returns sm_<cc> when NVRTC supports cc (or cannot say), else the
// newest compute_<a> with a below cc, which the driver JIT-compiles for the
// device.
func pickArch(cc int, archs []int) (string, error) {
	if len(archs) == 0 {
		return fmt.Sprintf("sm_%d", cc), nil
	}
	best := -1
	for _, a := range archs {
		if a == cc {
			return fmt.Sprintf("sm_%d", cc), nil
		}
		if a < cc && a > best {
			best = a
		}
	}
	if best < 0 {
		return "", &NVRTCError{Op: "nvrtcCompileProgram", Result: NVRTCErrorInvalidOption,
			Log: fmt.Sprintf("this NVRTC supports compute capabilities %v, none at or below the device's %d.%d", archs, cc/10, cc%10)}
	}
	return fmt.Sprintf("compute_%d", best), nil
}

// ErrNoNVRTC matches every error caused by the NVRTC library (libnvrtc)
// being absent or unusable.
var ErrNoNVRTC = errors.New("cuda: no NVRTC library (libnvrtc)")
