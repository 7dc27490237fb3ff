//go:build cgo

package docasdk

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// fakeSDK builds the stand-in SDK of testdata/fakesdk: the three libraries
// under the SDK's file names (and sonames), libdoca_verbs.so linked against
// libdoca_common.so and libdoca_gpunetio.so against both, without any
// run path, so they load from a directory off the loader's search path only
// in the right order. Variants are built on demand, each in a directory of
// its own.
type fakeSDK struct {
	cc, src, root string

	mu   sync.Mutex
	dirs map[string]string // variant -> directory
	errs map[string]error
}

// buildFake compiles the sources and links the complete variant. skip is
// set when there is no C compiler.
func buildFake(root string) (f *fakeSDK, skip string, err error) {
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
	src, err := filepath.Abs("testdata/fakesdk")
	if err != nil {
		return nil, "", err
	}
	f = &fakeSDK{cc: cc, src: src, root: root, dirs: map[string]string{}, errs: map[string]error{}}
	for _, c := range []string{"common", "verbs", "gpunetio"} {
		if err := f.run("-c", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
			"-o", filepath.Join(root, c+".o"), filepath.Join(src, c+".c")); err != nil {
			return nil, "", err
		}
	}
	if _, err := f.variant("full", "", nil); err != nil {
		return nil, "", err
	}
	return f, "", nil
}

func (f *fakeSDK) run(args ...string) error {
	cmd := exec.Command(f.cc, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", f.cc, strings.Join(args, " "), err, out.String())
	}
	return nil
}

// full is the directory of the complete fake.
func (f *fakeSDK) full() string { return f.dirs["full"] }

// without is a directory holding the fake minus library lib.
func (f *fakeSDK) without(lib string) (string, error) {
	dir, err := f.variant("without-"+lib, "", nil)
	if err != nil {
		return "", err
	}
	if err := os.Remove(filepath.Join(dir, lib)); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return dir, nil
}

// hiding is a directory holding the fake with library lib linked so that
// it does not export syms.
func (f *fakeSDK) hiding(lib string, syms ...string) (string, error) {
	return f.variant("hide-"+strings.Join(syms, "+"), lib, syms)
}

func (f *fakeSDK) variant(name, hideIn string, hide []string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.dirs[name]; ok {
		return d, f.errs[name]
	}
	dir := filepath.Join(f.root, name)
	err := f.link(dir, hideIn, hide)
	f.dirs[name], f.errs[name] = dir, err
	return dir, err
}

func (f *fakeSDK) link(dir, hideIn string, hide []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	libs := []struct{ name, obj string }{
		{LibCommon, "common.o"}, {LibVerbs, "verbs.o"}, {LibGPUNetIO, "gpunetio.o"},
	}
	deps := map[string][]string{
		LibCommon:   {"-pthread"},
		LibVerbs:    {"-Wl,--no-as-needed", "-L" + dir, "-ldoca_common"},
		LibGPUNetIO: {"-Wl,--no-as-needed", "-L" + dir, "-ldoca_verbs", "-ldoca_common"},
	}
	for _, l := range libs {
		args := []string{"-shared", "-o", filepath.Join(dir, l.name), "-Wl,-soname," + l.name,
			filepath.Join(f.root, l.obj)}
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
		if err := f.run(args...); err != nil {
			return err
		}
	}
	return nil
}

// callLog reads the fake's call log (FAKE_DOCA_LOG).
type callLog struct{ path string }

func (c *callLog) lines() []string {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func (c *callLog) mark() int { return len(c.lines()) }

func (c *callLog) since(mark int) []string {
	l := c.lines()
	if mark > len(l) {
		return nil
	}
	return l[mark:]
}
