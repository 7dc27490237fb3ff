package gpunetio

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goNames collects the exported functions, types and methods (Type.Method)
// declared in this package's non-test sources.
func goNames(t *testing.T) map[string]bool {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						names[d.Name.Name] = true
						continue
					}
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					if id, ok := rt.(*ast.Ident); ok {
						names[id.Name+"."+d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if ts, ok := s.(*ast.TypeSpec); ok {
							names[ts.Name.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// TestDOCAFunctionMapIsThe30API checks DOCAFunctions against the list of
// DOCA GPUNetIO 3.0's doca_gpunetio.h and doca_gpunetio_high_level.h
// functions: every one mapped once, nothing else (not the 2.0 name
// doca_gpu_dmabuf_fd), each to a Go name that exists.
func TestDOCAFunctionMapIsThe30API(t *testing.T) {
	f, err := os.Open("testdata/doca_gpunetio_3.0_functions.txt")
	require.NoError(t, err)
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if c := strings.TrimSpace(sc.Text()); c != "" && !strings.HasPrefix(c, "#") {
			want = append(want, c)
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, 28)
	inList := map[string]bool{}
	for _, c := range want {
		inList[c] = true
	}
	mapped := map[string]bool{}
	for _, e := range DOCAFunctions {
		assert.False(t, mapped[e.C], "%s mapped twice", e.C)
		mapped[e.C] = true
		assert.True(t, inList[e.C], "%s is not a DOCA GPUNetIO 3.0 function", e.C)
	}
	for _, c := range want {
		assert.True(t, mapped[c], "DOCA function %s has no Go counterpart in DOCAFunctions", c)
	}
	assert.False(t, mapped["doca_gpu_dmabuf_fd"], "renamed in 3.0")
	names := goNames(t)
	for _, e := range DOCAFunctions {
		assert.True(t, names[e.Go], "%s maps to %s, which does not exist", e.C, e.Go)
	}
}

// The library reports 3.0.0 and accepts device code 2.0.0..3.0.0 and host
// code 0.2.0..3.0.0; the device headers report the same version.
func TestVersion30(t *testing.T) {
	assert.Equal(t, uint32(0x030000), LibraryVersion())
	assert.Equal(t, MakeVersion(3, 0, 0), uint32(Version))
	for v, ok := range map[uint32]bool{0x01ffff: false, 0x020000: true, 0x020001: true, 0x030000: true, 0x030001: false, 0x040000: false} {
		assert.Equal(t, ok, CheckDeviceCodeCompatibility(v) == nil, "device code 0x%06x", v)
	}
	for v, ok := range map[uint32]bool{0x0001ff: false, 0x000200: true, 0x020000: true, 0x030000: true, 0x030001: false} {
		assert.Equal(t, ok, CheckHostCodeCompatibility(v) == nil, "host code 0x%06x", v)
	}

	// The macros kernels compile with (cuda/include) are the same numbers.
	b, err := os.ReadFile("../cuda/include/common/doca_gpunetio_verbs_def.h")
	require.NoError(t, err)
	macro := func(name string) uint32 {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)$`).FindSubmatch(b)
		require.NotNil(t, m, name)
		n, err := strconv.Atoi(string(m[1]))
		require.NoError(t, err)
		return uint32(n)
	}
	assert.Equal(t, uint32(Version), MakeVersion(uint8(macro("DOCA_GPUNETIO_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_VERSION_PATCH"))))
	assert.Equal(t, uint32(MinCompatDeviceCodeVersion), MakeVersion(uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_DEVICE_CODE_VERSION_PATCH"))))
	assert.Equal(t, uint32(MinCompatHostCodeVersion), MakeVersion(uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MAJOR")),
		uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_MINOR")), uint8(macro("DOCA_GPUNETIO_MIN_COMPAT_HOST_CODE_VERSION_PATCH"))))
}
