package gpuskip

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder stands in for a *testing.T: it records a skip or a failure
// instead of stopping the goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestSkipOutsideStrictMode(t *testing.T) {
	t.Setenv(Env, "")
	r := &recorder{}
	Skipf(r, "no CUDA driver: %v", "libcuda.so.1 not found")
	if r.skipped != "no CUDA driver: libcuda.so.1 not found" || r.failed != "" {
		t.Fatalf("skipped %q, failed %q", r.skipped, r.failed)
	}
	t.Setenv(Env, "0")
	r = &recorder{}
	Skip(r, "no NVRTC library")
	if r.skipped != "no NVRTC library" || r.failed != "" {
		t.Fatalf("GDAKI_GPU_STRICT=0: skipped %q, failed %q", r.skipped, r.failed)
	}
}

func TestStrictModeFails(t *testing.T) {
	t.Setenv(Env, "1")
	if !Strict() {
		t.Fatal("Strict() is false with GDAKI_GPU_STRICT=1")
	}
	r := &recorder{}
	Skipf(r, "no CUDA device: %d devices", 0)
	if r.skipped != "" || !strings.Contains(r.failed, "GDAKI_GPU_STRICT=1") ||
		!strings.Contains(r.failed, "no CUDA device: 0 devices") {
		t.Fatalf("skipped %q, failed %q", r.skipped, r.failed)
	}
}

// Every package whose tests call gpuskip carries the GPU_TESTS marker that
// scripts/gpu-build.sh selects the GPU suite's test binaries by, and every
// marker sits in a Go package.
func TestGPUTestPackagesAreMarked(t *testing.T) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Skip("the go command is not in GOROOT/bin nor on PATH: the check needs go list")
		}
	}
	out, err := exec.Command(goCmd, "list", "-json=ImportPath,Dir,TestImports,XTestImports", "github.com/gdaki/gpunetio/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/gdaki/gpunetio/internal/gpuskip"
	const root = "../.." // the module root, from this package's directory
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath, Dir           string
			TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		uses := false
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			uses = uses || imp == self
		}
		_, err := os.Stat(filepath.Join(p.Dir, "GPU_TESTS"))
		if uses && err != nil {
			t.Errorf("%s has GPU tests (its tests use gpuskip) but no GPU_TESTS marker: scripts/gpu-build.sh will not build them", p.ImportPath)
		}
	}
	markers, err := findMarkers(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		gos, _ := filepath.Glob(filepath.Join(filepath.Dir(m), "*_test.go"))
		if len(gos) == 0 {
			t.Errorf("%s marks a directory without Go tests", m)
		}
	}
	if len(markers) == 0 {
		t.Error("no GPU_TESTS marker in the module")
	}
}

func findMarkers(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "GPU_TESTS" {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
