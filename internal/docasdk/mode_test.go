//go:build cgo

package docasdk

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each test here runs the mode decision in a fresh process (runChildTest)
// and checks the mode, the reason, the exact log lines, that SDK calls are
// refused or served accordingly, and that no SDK library stays mapped after
// a fallback.

func notFoundLine(dir string) Message {
	return warn("Env var DOCA_SDK_LIB_PATH set to " + dir + ", but DOCA SDK libraries not found. DOCA SDK is not in use")
}

// assertOpen checks a child that fell back to open mode.
func assertOpen(t *testing.T, r childReport, log []Message, reason string) {
	t.Helper()
	assert.Equal(t, Open, r.Decision.Mode)
	assert.Equal(t, log, r.Decision.Log)
	assert.Equal(t, log, r.Logged, "the logger got the decision's lines and nothing else")
	if strings.HasSuffix(reason, "*") {
		assert.True(t, strings.HasPrefix(r.Decision.Reason, strings.TrimSuffix(reason, "*")), "reason %q", r.Decision.Reason)
	} else {
		assert.Equal(t, reason, r.Decision.Reason)
	}
	assert.Contains(t, r.Notes["gpu_create"], "doca_gpu_create: DOCA_ERROR_NOT_SUPPORTED: not called: DOCA SDK mode is not active (")
	assert.Equal(t, "true", r.Notes["gpu_create_not_active"])
	assert.Empty(t, r.Mapped, "no SDK library stays loaded in open mode")
	assert.Empty(t, r.Calls, "the SDK was never called")
	assert.Empty(t, r.Decision.Libraries)
	assert.Empty(t, r.Decision.Dir)
}

func TestModeUnset(t *testing.T) {
	r := runChildTest(t, "probe", nil)
	assertOpen(t, r, []Message{warn("Env var DOCA_SDK_LIB_PATH not set (null). DOCA SDK is not in use")},
		"DOCA_SDK_LIB_PATH is not set")
	assert.False(t, r.Decision.EnvSet)
}

func TestModeEmpty(t *testing.T) {
	r := runChildTest(t, "probe", map[string]string{EnvLibPath: ""})
	assertOpen(t, r, []Message{warn("Env var DOCA_SDK_LIB_PATH not set . DOCA SDK is not in use")},
		"DOCA_SDK_LIB_PATH is empty")
	assert.True(t, r.Decision.EnvSet)
}

func TestModeMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir})
	assertOpen(t, r, []Message{
		errm(fmt.Sprintf("Failed to find libdoca_common.so library %s/libdoca_common.so (DOCA_SDK_LIB_PATH=%s)", dir, dir)),
		notFoundLine(dir),
	}, fmt.Sprintf("dlopen %s/libdoca_common.so: %s/libdoca_common.so: cannot open shared object file: No such file or directory", dir, dir))
	assert.Equal(t, dir, r.Decision.Env)
}

func TestModeMissingLibrary(t *testing.T) {
	f := needFake(t)
	for _, lib := range []string{LibCommon, LibVerbs, LibGPUNetIO} {
		t.Run(lib, func(t *testing.T) {
			dir, err := f.without(lib)
			require.NoError(t, err)
			r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir})
			assertOpen(t, r, []Message{
				errm(fmt.Sprintf("Failed to find %s library %s/%s (DOCA_SDK_LIB_PATH=%s)", lib, dir, lib, dir)),
				notFoundLine(dir),
			}, fmt.Sprintf("dlopen %s/%s: *", dir, lib))
		})
	}
}

// One mandatory symbol per loader group and object kind, including one that
// is resolved but never called and ones that live in libdoca_common.so but
// are looked up through libdoca_verbs.so (dlerror names the library asked).
func TestModeMissingMandatorySymbol(t *testing.T) {
	f := needFake(t)
	for _, c := range []struct {
		sym, definedIn, askedOn, summary string
	}{
		{"doca_gpu_mem_free", LibGPUNetIO, LibGPUNetIO, "Failed to get all required DOCA GPUNetIO SDK symbols"},
		{"doca_dev_close", LibCommon, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_rdma_bridge_open_dev_from_pd", LibCommon, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_rdma_bridge_get_dev_pd", LibCommon, LibCommon, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_umem_get_id", LibCommon, LibCommon, "Failed to get all required DOCA Verbs UMEM SDK symbols"},
		{"doca_uar_reg_addr_get", LibCommon, LibCommon, "Failed to get all required DOCA Verbs UMEM SDK symbols"},
		{"doca_verbs_cq_get_cqn", LibVerbs, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_verbs_qp_modify", LibVerbs, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_verbs_ah_attr_set_gid", LibVerbs, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_verbs_bridge_verbs_pd_import", LibVerbs, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
		{"doca_verbs_qp_init_attr_set_srq", LibVerbs, LibVerbs, "Failed to get all required DOCA Verbs Dev SDK symbols"},
	} {
		t.Run(c.sym, func(t *testing.T) {
			dir, err := f.hiding(c.definedIn, c.sym)
			require.NoError(t, err)
			r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir})
			assertOpen(t, r, []Message{
				errm(fmt.Sprintf("Failed to get symbol %s: %s/%s: undefined symbol: %s", c.sym, dir, c.askedOn, c.sym)),
				errm(c.summary),
				notFoundLine(dir),
			}, fmt.Sprintf("the DOCA SDK in %s lacks 1 required symbol(s): %s", dir, c.sym))
		})
	}
}

// The full fake in a fresh process: SDK mode, nothing printed while
// deciding, the calls reach the fake, each creator prints "in use".
func TestModeSDK(t *testing.T) {
	f := needFake(t)
	dir := f.full()
	r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir})
	require.Equal(t, SDK, r.Decision.Mode, r.Decision.Reason)
	assert.Empty(t, r.Decision.Log)
	assert.Equal(t, dir, r.Decision.Dir)
	assert.Equal(t, []string{dir + "/libdoca_common.so", dir + "/libdoca_verbs.so", dir + "/libdoca_gpunetio.so"}, r.Decision.Libraries)
	assert.ElementsMatch(t, r.Decision.Libraries, r.Mapped, "the three libraries are loaded from the directory, which is not on the loader path")
	inUse := warn("Env var DOCA_SDK_LIB_PATH set to " + dir + ". DOCA SDK is in use")
	assert.Equal(t, []Message{inUse, inUse}, r.Logged, "one line per creator (GPU, QP init attributes)")
	assert.Equal(t, "ok", r.Notes["gpu_create"])
	assert.Equal(t, "ok", r.Notes["set_ordering"])
	assert.Equal(t, "2", r.Notes["get_ordering_value"])
	var called []string
	for _, l := range r.Calls {
		called = append(called, strings.Fields(l)[0])
	}
	assert.Equal(t, []string{
		"doca_gpu_create", "doca_gpu_create", "doca_gpu_destroy",
		"doca_verbs_qp_init_attr_create", "doca_verbs_qp_init_attr_create",
		"doca_verbs_qp_init_attr_set_ordering_semantic", "doca_verbs_qp_init_attr_get_ordering_semantic",
		"doca_verbs_qp_init_attr_destroy",
	}, called, "each creator logs its call and its result")
	assert.Equal(t, `doca_gpu_create bus_id="0000:01:00.0"`, r.Calls[0])
}

// The stand-in depends on itself as the SDK does (libdoca_gpunetio.so needs
// libdoca_verbs.so and libdoca_common.so, libdoca_verbs.so needs
// libdoca_common.so), has no run path, and its directory is not on the
// loader's path: opened out of order it does not load. So TestModeSDK shows
// that the load order resolves the dependencies.
func TestFakeNeedsLoadOrder(t *testing.T) {
	f := needFake(t)
	needed := map[string][]string{
		LibCommon:   nil,
		LibVerbs:    {LibCommon},
		LibGPUNetIO: {LibVerbs, LibCommon},
	}
	for lib, want := range needed {
		ef, err := elf.Open(filepath.Join(f.full(), lib))
		require.NoError(t, err)
		libs, err := ef.ImportedLibraries()
		require.NoError(t, err)
		var doca []string
		for _, l := range libs {
			if strings.HasPrefix(l, "libdoca_") {
				doca = append(doca, l)
			}
		}
		assert.ElementsMatch(t, want, doca, "%s needs", lib)
		for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
			v, err := ef.DynString(tag)
			require.NoError(t, err)
			assert.Empty(t, v, "%s has no %v", lib, tag)
		}
		ef.Close()
	}
	assert.NotContains(t, os.Getenv("LD_LIBRARY_PATH"), f.full())
	r := runChildTest(t, "gpunetio-first", map[string]string{EnvLibPath: f.full()})
	assert.Equal(t, "false", r.Notes["opened"])
	assert.Equal(t, "libdoca_verbs.so: cannot open shared object file: No such file or directory", r.Notes["error"])
}

func TestModeMissingOptional(t *testing.T) {
	f := needFake(t)
	const set, get = "doca_verbs_qp_init_attr_set_ordering_semantic", "doca_verbs_qp_init_attr_get_ordering_semantic"
	pair := warn("The DOCA SDK installed on the system doesn't provide symbols for the set/get ordering semantic")
	for _, c := range []struct {
		name    string
		missing []string
	}{
		{"both", []string{set, get}},
		{"set only", []string{set}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, err := f.hiding(LibVerbs, c.missing...)
			require.NoError(t, err)
			r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir})
			require.Equal(t, SDK, r.Decision.Mode, "only the optional calls are disabled")
			var want []Message
			for _, s := range c.missing {
				want = append(want, errm(fmt.Sprintf("Failed to get symbol %s: %s/libdoca_verbs.so: undefined symbol: %s", s, dir, s)))
			}
			want = append(want, pair)
			assert.Equal(t, want, r.Decision.Log)
			assert.False(t, r.Decision.SetOrderingSemantic)
			assert.Equal(t, len(c.missing) == 1, r.Decision.GetOrderingSemantic)

			inUse := warn("Env var DOCA_SDK_LIB_PATH set to " + dir + ". DOCA SDK is in use")
			wantLogged := append(append([]Message(nil), want...), inUse, inUse,
				warn("The DOCA SDK installed on the system doesn't provide symbols for the set_ordering_semantic"))
			assert.Equal(t, "doca_verbs_qp_init_attr_set_ordering_semantic: DOCA_ERROR_NOT_SUPPORTED: not called: the installed DOCA SDK does not provide the QP ordering semantic", r.Notes["set_ordering"])
			assert.Equal(t, "true", r.Notes["set_ordering_missing"])
			if len(c.missing) == 2 {
				wantLogged = append(wantLogged, warn("The DOCA SDK installed on the system doesn't provide symbols for the get_ordering_semantic"))
				assert.Equal(t, "true", r.Notes["get_ordering_missing"])
			} else {
				assert.Equal(t, "ok", r.Notes["get_ordering"])
				assert.Equal(t, "0", r.Notes["get_ordering_value"], "the fake's value: the setter never reached it")
			}
			assert.Equal(t, wantLogged, r.Logged)
			assert.Equal(t, "ok", r.Notes["gpu_create"])
			for _, l := range r.Calls {
				assert.False(t, strings.HasPrefix(l, set), "the missing setter is never called: %s", l)
			}
		})
	}
}

// A logger may call back into the package while the decision's lines are
// printed (a deadlock would kill the child).
func TestModeReentrantLogger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	r := runChildTest(t, "reentrant", map[string]string{EnvLibPath: dir})
	assert.Equal(t, Open, r.Decision.Mode)
	assert.Equal(t, "2", r.Notes["lines"], "the two fallback lines, once")
}

// The decision is latched: setting the variable after the first use does
// not load the SDK, and unsetting it does not leave SDK mode.
func TestModeLatched(t *testing.T) {
	t.Run("open stays open", func(t *testing.T) {
		f := needFake(t)
		r := runChildTest(t, "probe", map[string]string{flipEnv: f.full()})
		assertOpen(t, r, []Message{warn("Env var DOCA_SDK_LIB_PATH not set (null). DOCA SDK is not in use")},
			"DOCA_SDK_LIB_PATH is not set")
		assert.Equal(t, "open", r.Notes["mode_after_flip"])
		assert.Contains(t, r.Notes["gpu_create_after_flip"], "DOCA SDK mode is not active")
	})
	t.Run("SDK stays SDK", func(t *testing.T) {
		f := needFake(t)
		dir := f.full()
		r := runChildTest(t, "probe", map[string]string{EnvLibPath: dir, flipEnv: unset})
		require.Equal(t, SDK, r.Decision.Mode)
		assert.Equal(t, "SDK", r.Notes["mode_after_flip"])
		assert.Equal(t, "0", r.Notes["log_after_flip"], "nothing is decided again")
		assert.Equal(t, "ok", r.Notes["gpu_create_after_flip"])
		assert.Contains(t, r.Calls, `doca_gpu_create bus_id="0000:02:00.0"`)
		inUse := warn("Env var DOCA_SDK_LIB_PATH set to " + dir + ". DOCA SDK is in use")
		assert.Equal(t, []Message{inUse, inUse, inUse}, r.Logged, "the latched directory is printed, not the current variable")
	})
}

// First use from many goroutines at once decides once: one set of lines,
// one mode, every call served (or refused) consistently. Run under -race.
func TestModeConcurrentFirstUse(t *testing.T) {
	f := needFake(t)
	t.Run("SDK", func(t *testing.T) {
		dir := f.full()
		r := runChildTest(t, "concurrent", map[string]string{EnvLibPath: dir})
		assert.Equal(t, SDK, r.Decision.Mode)
		assert.Equal(t, "SDK", r.Notes["modes"])
		assert.Equal(t, "16", r.Notes["created"], "16 distinct handles")
		assert.Equal(t, "0", r.Notes["errors"], r.Notes["first_error"])
		assert.Len(t, r.Logged, 16, "one in-use line per creation, none from deciding")
		creates, destroys := 0, 0
		for _, l := range r.Calls {
			if strings.HasPrefix(l, "doca_gpu_create -> gpu@") {
				creates++
			}
			if strings.HasPrefix(l, "doca_gpu_destroy gpu=gpu@") {
				destroys++
			}
		}
		assert.Equal(t, 16, creates)
		assert.Equal(t, 16, destroys, "every destroy got a live handle")
	})
	t.Run("fallback", func(t *testing.T) {
		dir, err := f.without(LibGPUNetIO)
		require.NoError(t, err)
		r := runChildTest(t, "concurrent", map[string]string{EnvLibPath: dir})
		assert.Equal(t, Open, r.Decision.Mode)
		assert.Equal(t, "open", r.Notes["modes"])
		assert.Equal(t, "16", r.Notes["errors"], "every creation refused")
		assert.Equal(t, []Message{
			errm(fmt.Sprintf("Failed to find libdoca_gpunetio.so library %s/libdoca_gpunetio.so (DOCA_SDK_LIB_PATH=%s)", dir, dir)),
			notFoundLine(dir),
		}, r.Logged, "printed once")
		assert.Empty(t, r.Mapped)
	})
}
