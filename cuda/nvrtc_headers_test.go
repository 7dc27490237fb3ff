package cuda

import (
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNVRTCHeaders compiles the embedded device headers with NVRTC, with no
// include path and no nvcc, the way a Go program does:
//
//   - a kernel including each header on its own, in each include style of
//     cuda/README.md: its path under include/ (-Iinclude, which for the
//     top-level headers is the umbrella style) and its bare name (-Iinclude
//     -Iinclude/host -Iinclude/common -Iinclude/device);
//   - cuda/test/api_compile.cu, which calls every device API signature, in
//     its three include styles, to PTX and to an sm_90 cubin.
func TestNVRTCHeaders(t *testing.T) {
	needNVRTC(t)
	for _, h := range HeaderNames() {
		styles := map[string]string{"path": h}
		if b := path.Base(h); b != h {
			styles["bare"] = b
		}
		for style, inc := range styles {
			t.Run(style+"="+strings.ReplaceAll(inc, "/", "_"), func(t *testing.T) {
				src := fmt.Sprintf("#include <%s>\nextern \"C\" __global__ void k(int *p) { *p = 1; }\n", inc)
				_, err := Compile(src, "include_"+path.Base(h)+".cu", &CompileOptions{Arch: "compute_80"})
				require.NoError(t, err, "#include <%s>", inc)
			})
		}
	}
	api, err := os.ReadFile("test/api_compile.cu")
	require.NoError(t, err)
	for style := 1; style <= 3; style++ {
		for _, arch := range []string{"compute_80", "sm_90"} {
			t.Run(fmt.Sprintf("api_compile_style%d_%s", style, arch), func(t *testing.T) {
				out, err := Compile(string(api), "api_compile.cu", &CompileOptions{
					Arch:    arch,
					Defines: []string{fmt.Sprintf("GPUNETIO_INCLUDE_STYLE=%d", style), "GPUNETIO_NO_MLX5DV"},
				})
				require.NoError(t, err)
				require.NotEmpty(t, out.PTX)
				if strings.HasPrefix(arch, "sm_") {
					require.NotEmpty(t, out.CUBIN)
				}
				if out.Log != "" {
					t.Logf("NVRTC warnings:\n%s", out.Log)
				}
			})
		}
	}
}
