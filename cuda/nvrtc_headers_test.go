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

// TestNVRTCFamilyCorpus compiles the kernels of cuda/test/corpus (one per
// DOCA family's style: SDK 3.2, 3.3, 3.4, open source, NCCL) with NVRTC in
// every include style, with and without GDAKI_DOCA_FAMILY_SDK, to PTX and to
// an sm_90 cubin; under NVRTC the headers declare the mlx5dv subset the SDK
// kernels use. refuse_free_flow.cu must fail, naming CPU_PROXY_FREE_FLOW.
func TestNVRTCFamilyCorpus(t *testing.T) {
	needNVRTC(t)
	corpusH, err := os.ReadFile("test/corpus/corpus.h")
	require.NoError(t, err)
	hdrs := map[string][]byte{"corpus.h": corpusH}
	for _, f := range []string{"sdk32", "sdk33", "sdk34", "os", "nccl"} {
		src, err := os.ReadFile("test/corpus/" + f + ".cu")
		require.NoError(t, err)
		hdrs[f+".cu"] = src
		for style := 1; style <= 3; style++ {
			for _, fam := range []string{"", "GDAKI_DOCA_FAMILY_SDK"} {
				for _, arch := range []string{"compute_80", "sm_90"} {
					defs := []string{fmt.Sprintf("CORPUS_INCLUDE_STYLE=%d", style)}
					if fam != "" {
						defs = append(defs, fam)
					}
					t.Run(fmt.Sprintf("%s_style%d_%s%s", f, style, arch, strings.TrimPrefix("_"+fam, "_GDAKI_DOCA_FAMILY")), func(t *testing.T) {
						out, err := Compile(string(src), f+".cu", &CompileOptions{Arch: arch, Defines: defs, Headers: hdrs})
						require.NoError(t, err)
						require.NotEmpty(t, out.PTX)
						if strings.HasPrefix(arch, "sm_") {
							require.NotEmpty(t, out.CUBIN)
						}
					})
				}
			}
		}
	}
	refused, err := os.ReadFile("test/corpus/refuse_free_flow.cu")
	require.NoError(t, err)
	_, err = Compile(string(refused), "refuse_free_flow.cu", &CompileOptions{Arch: "compute_80"})
	require.Error(t, err, "a kernel naming CPU_PROXY_FREE_FLOW must not compile")
	require.Contains(t, err.Error(), "CPU_PROXY_FREE_FLOW")
}
