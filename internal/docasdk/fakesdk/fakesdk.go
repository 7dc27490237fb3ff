// Package fakesdk builds the stand-in DOCA SDK that the tests of this module
// run SDK mode against: three shared libraries with the SDK's file names
// (libdoca_common.so, libdoca_verbs.so, libdoca_gpunetio.so) exporting every
// entry point package docasdk resolves. Their C sources (csrc, written for
// these tests) are embedded and compiled with the system C compiler into a
// directory of the caller's choosing.
//
// The libraries record each call with its arguments in the file named by
// FAKE_DOCA_LOG (CallLog reads it), hand out distinct handles, keep what the
// setters store for the getters, and fail a function on request
// (FAKE_DOCA_FAIL="name=code,..."). With FAKE_DOCA_REAL_MEM=1 the GPU handle
// allocates real host memory, so that code writing what it allocated (package
// gpunetio on a host-memory GPU) can run on it. See csrc/fake.h.
//
// The fake is a stand-in: whether NVIDIA's SDK behaves as it does is not
// tested by anything that uses it. The package is for tests only.
package fakesdk

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed csrc/*.c csrc/*.h
var sources embed.FS

// The file names of the three libraries, in the order they depend on one
// another.
const (
	LibCommon   = "libdoca_common.so"
	LibVerbs    = "libdoca_verbs.so"
	LibGPUNetIO = "libdoca_gpunetio.so"
)

// The environment variables the fake reads at every call.
const (
	// EnvLog names the file each call is appended to, one line per call.
	EnvLog = "FAKE_DOCA_LOG"
	// EnvFail makes functions fail: "name=code[,name=code]"; code "null"
	// makes a creator succeed without an object.
	EnvFail = "FAKE_DOCA_FAIL"
	// EnvRealMem set to "1" makes the GPU handle hand out real memory.
	EnvRealMem = "FAKE_DOCA_REAL_MEM"
)

// SDK is a built fake: the objects compiled once and the library
// directories linked from them (variants are linked on demand, each in a
// directory of its own).
type SDK struct {
	cc, root string

	mu   sync.Mutex
	dirs map[string]string // variant -> directory
	errs map[string]error
}

// ForTest builds the fake under a temporary directory of t, which it
// returns too. It skips t when there is no C compiler and fails it when the
// build fails.
func ForTest(t testing.TB) (*SDK, string) {
	t.Helper()
	root := t.TempDir()
	s, skip, err := Build(root)
	if err != nil {
		t.Fatalf("building the stand-in DOCA SDK: %v", err)
	}
	if s == nil {
		t.Skip(skip)
	}
	return s, root
}

// Build compiles the fake under root (a directory the caller removes) and
// links the complete variant. It returns a non-empty skip reason, and no
// error, when there is no C compiler ($CC, gcc or cc).
func Build(root string) (s *SDK, skip string, err error) {
	cc := ""
	for _, c := range []string{os.Getenv("CC"), "gcc", "cc"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		return nil, "no C compiler (gcc, cc or $CC) on PATH: the fake DOCA SDK cannot be built", nil
	}
	src := filepath.Join(root, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, "", err
	}
	files, err := sources.ReadDir("csrc")
	if err != nil {
		return nil, "", err
	}
	for _, f := range files {
		b, err := sources.ReadFile("csrc/" + f.Name())
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(src, f.Name()), b, 0o644); err != nil {
			return nil, "", err
		}
	}
	s = &SDK{cc: cc, root: root, dirs: map[string]string{}, errs: map[string]error{}}
	for _, c := range []string{"common", "verbs", "gpunetio"} {
		if err := s.run("-c", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
			"-o", filepath.Join(root, c+".o"), filepath.Join(src, c+".c")); err != nil {
			return nil, "", err
		}
	}
	if _, err := s.variant("full", "", nil); err != nil {
		return nil, "", err
	}
	return s, "", nil
}

func (s *SDK) run(args ...string) error {
	cmd := exec.Command(s.cc, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", s.cc, strings.Join(args, " "), err, out.String())
	}
	return nil
}

// Full is the directory of the complete fake: what DOCA_SDK_LIB_PATH names
// for SDK mode.
func (s *SDK) Full() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dirs["full"]
}

// Without is a directory holding the fake minus library lib.
func (s *SDK) Without(lib string) (string, error) {
	dir, err := s.variant("without-"+lib, "", nil)
	if err != nil {
		return "", err
	}
	if err := os.Remove(filepath.Join(dir, lib)); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return dir, nil
}

// Hiding is a directory holding the fake with library lib linked so that it
// does not export syms.
func (s *SDK) Hiding(lib string, syms ...string) (string, error) {
	return s.variant("hide-"+strings.Join(syms, "+"), lib, syms)
}

func (s *SDK) variant(name, hideIn string, hide []string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.dirs[name]; ok {
		return d, s.errs[name]
	}
	dir := filepath.Join(s.root, name)
	err := s.link(dir, hideIn, hide)
	s.dirs[name], s.errs[name] = dir, err
	return dir, err
}

// link links the three libraries into dir: libdoca_verbs.so against
// libdoca_common.so and libdoca_gpunetio.so against both, without a run
// path, so that they load from a directory off the loader's search path
// only in the right order (as NVIDIA's do).
func (s *SDK) link(dir, hideIn string, hide []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	libs := []struct{ name, obj string }{
		{LibCommon, "common.o"}, {LibVerbs, "verbs.o"}, {LibGPUNetIO, "gpunetio.o"},
	}
	deps := map[string][]string{
		LibCommon:   {"-pthread"},
		LibVerbs:    {"-Wl,--no-as-needed", "-L" + dir, "-ldoca_common"},
		LibGPUNetIO: {"-Wl,--no-as-needed", "-pthread", "-L" + dir, "-ldoca_verbs", "-ldoca_common"},
	}
	for _, l := range libs {
		args := []string{"-shared", "-o", filepath.Join(dir, l.name), "-Wl,-soname," + l.name,
			filepath.Join(s.root, l.obj)}
		if l.name == hideIn {
			// A version script that makes the symbols local removes them
			// from the dynamic symbol table.
			script := filepath.Join(dir, "hide.map")
			body := "{ global: *; local: " + strings.Join(hide, "; ") + "; };\n"
			if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
				return err
			}
			args = append(args, "-Wl,--version-script="+script)
		}
		args = append(args, deps[l.name]...)
		if err := s.run(args...); err != nil {
			return err
		}
	}
	return nil
}

// CallLog reads the fake's call log (the file EnvLog names).
type CallLog struct{ Path string }

// Lines returns every recorded line, in order.
func (c *CallLog) Lines() []string {
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Mark is the number of lines recorded so far.
func (c *CallLog) Mark() int { return len(c.Lines()) }

// Since returns the lines recorded after mark.
func (c *CallLog) Since(mark int) []string {
	l := c.Lines()
	if mark > len(l) {
		return nil
	}
	return l[mark:]
}

// Functions returns the function names of the lines after mark that record
// a call (not the " -> " lines reporting what a call handed back), in order.
func (c *CallLog) Functions(mark int) []string {
	var out []string
	for _, l := range c.Since(mark) {
		if strings.Contains(l, " -> ") {
			continue
		}
		name, _, _ := strings.Cut(l, " ")
		out = append(out, name)
	}
	return out
}

// RunTests runs the tests of the running test binary (os.Args[0]) whose
// names match pattern in a child process, verbosely, with env ("K=V")
// added to this process's environment, and returns what it printed. The mode
// decision is latched per process, so a package's tests of SDK mode run in
// a child with DOCA_SDK_LIB_PATH set. The error is the child's exit status.
func RunTests(pattern string, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Passed returns the names of the tests a verbose test run reports as
// passed ("--- PASS: Name"), without subtests.
func Passed(output string) []string {
	var names []string
	for _, l := range strings.Split(output, "\n") {
		if rest, ok := strings.CutPrefix(l, "--- PASS: "); ok {
			name, _, _ := strings.Cut(rest, " ")
			names = append(names, name)
		}
	}
	return names
}

// A package's same-API test runs one table of operations in open mode in
// the parent and in SDK mode in a child, each operation giving an outcome
// string. WriteOutcomes is the child's half, CompareOutcomes the parent's.

// WriteOutcomes writes the child's outcomes, by operation name, to path.
func WriteOutcomes(path string, outcomes map[string]string) error {
	b, err := json.Marshal(outcomes)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// CompareOutcomes reads the outcomes a child wrote to path and returns a
// line per operation whose outcome differs from open's, or that only one
// side has, sorted; none when the two modes behaved the same.
func CompareOutcomes(path string, open map[string]string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the SDK-mode outcomes: %w", err)
	}
	var sdk map[string]string
	if err := json.Unmarshal(b, &sdk); err != nil {
		return nil, fmt.Errorf("the SDK-mode outcomes in %s: %w", path, err)
	}
	var diffs []string
	for name, want := range open {
		if got, ok := sdk[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: open mode %q, not run in SDK mode", name, want))
		} else if got != want {
			diffs = append(diffs, fmt.Sprintf("%s: open mode %q, SDK mode %q", name, want, got))
		}
	}
	for name, got := range sdk {
		if _, ok := open[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: SDK mode %q, not run in open mode", name, got))
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}
