package docasdk

import (
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goLoader is a dynamic loader played in Go, so that every branch of the
// decision runs in-process: libraries open unless listed in missingLibs,
// symbols resolve (through the handle they are asked on) unless listed in
// missingSyms. It records what it was asked.
type goLoader struct {
	missingLibs map[string]bool
	missingSyms map[string]bool

	handles map[uintptr]string // handle -> library base name
	opens   []string           // "<path> GLOBAL|LOCAL"
	closes  []string           // library base names
	lookups map[string]string  // symbol -> library base name it was asked on
	bound   []uintptr
}

func newGoLoader() *goLoader {
	return &goLoader{
		missingLibs: map[string]bool{}, missingSyms: map[string]bool{},
		handles: map[uintptr]string{}, lookups: map[string]string{},
	}
}

func (l *goLoader) open(p string, global bool) (uintptr, string) {
	flag := "LOCAL"
	if global {
		flag = "GLOBAL"
	}
	l.opens = append(l.opens, p+" "+flag)
	base := path.Base(p)
	if l.missingLibs[base] {
		return 0, p + ": cannot open shared object file: No such file or directory"
	}
	h := uintptr(len(l.handles) + 1)
	l.handles[h] = base
	return h, ""
}

func (l *goLoader) sym(h uintptr, name string) (uintptr, string) {
	base, ok := l.handles[h]
	if !ok {
		return 0, "bad handle"
	}
	l.lookups[name] = base
	if l.missingSyms[name] {
		return 0, "fake: undefined symbol: " + name
	}
	return 0x1000 + uintptr(len(l.lookups)), ""
}

func (l *goLoader) close(h uintptr) { l.closes = append(l.closes, l.handles[h]) }

func (l *goLoader) bind(fns []uintptr) { l.bound = append([]uintptr(nil), fns...) }

type logRec struct{ lines []Message }

func (r *logRec) log(l Level, s string) { r.lines = append(r.lines, Message{l, s}) }

func warn(s string) Message { return Message{LevelWarning, s} }
func errm(s string) Message { return Message{LevelErr, s} }

const testDir = "/opt/doca/lib"

var notFound = warn("Env var DOCA_SDK_LIB_PATH set to " + testDir + ", but DOCA SDK libraries not found. DOCA SDK is not in use")

func TestDecideUnsetAndEmpty(t *testing.T) {
	for _, c := range []struct {
		name   string
		set    bool
		msg    string
		reason string
	}{
		{"unset", false, "Env var DOCA_SDK_LIB_PATH not set (null). DOCA SDK is not in use", "DOCA_SDK_LIB_PATH is not set"},
		{"empty", true, "Env var DOCA_SDK_LIB_PATH not set . DOCA SDK is not in use", "DOCA_SDK_LIB_PATH is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ld, rec := newGoLoader(), &logRec{}
			d := decide("", c.set, ld, rec.log)
			assert.Equal(t, Open, d.Mode)
			assert.Equal(t, c.set, d.EnvSet)
			assert.Equal(t, c.reason, d.Reason)
			assert.Equal(t, []Message{warn(c.msg)}, rec.lines)
			assert.Equal(t, rec.lines, d.Log, "the decision keeps what it printed")
			assert.Empty(t, ld.opens, "nothing is opened when the variable is unset or empty")
			assert.Nil(t, ld.bound)
		})
	}
}

func TestDecideSDK(t *testing.T) {
	ld, rec := newGoLoader(), &logRec{}
	d := decide(testDir, true, ld, rec.log)
	require.Equal(t, SDK, d.Mode, d.Reason)
	assert.Empty(t, rec.lines, "a complete SDK prints nothing while deciding")
	assert.Equal(t, []string{
		testDir + "/libdoca_common.so GLOBAL",
		testDir + "/libdoca_verbs.so GLOBAL",
		testDir + "/libdoca_gpunetio.so LOCAL",
	}, ld.opens, "common and verbs first and global, so that gpunetio's dependencies resolve")
	assert.Empty(t, ld.closes)
	assert.Equal(t, testDir, d.Dir)
	assert.Equal(t, []string{testDir + "/libdoca_common.so", testDir + "/libdoca_verbs.so", testDir + "/libdoca_gpunetio.so"}, d.Libraries)
	assert.True(t, d.SetOrderingSemantic)
	assert.True(t, d.GetOrderingSemantic)
	assert.Empty(t, d.Reason)

	// Every entry point is looked up through the library the reference
	// uses, and bound.
	mandatory, optional := Symbols()
	require.Len(t, mandatory, 98)
	require.Equal(t, []string{"doca_verbs_qp_init_attr_set_ordering_semantic", "doca_verbs_qp_init_attr_get_ordering_semantic"}, optional)
	for _, name := range append(mandatory, optional...) {
		assert.Equal(t, lookupLibrary(name), ld.lookups[name], name)
	}
	require.Len(t, ld.bound, int(symCount))
	for i, fn := range ld.bound {
		assert.NotZero(t, fn, "%s bound", sym(i))
	}
}

// lookupLibrary is the library the reference looks name up through: the GPU
// entry points through libdoca_gpunetio.so, UMEM and UAR (and the device's
// PD) through libdoca_common.so, every other one through libdoca_verbs.so.
func lookupLibrary(name string) string {
	switch {
	case strings.HasPrefix(name, "doca_gpu_"):
		return LibGPUNetIO
	case strings.HasPrefix(name, "doca_umem_"), strings.HasPrefix(name, "doca_uar_"),
		name == "doca_rdma_bridge_get_dev_pd":
		return LibCommon
	}
	return LibVerbs
}

// summaryFor is the summary line of the loader that owns name.
func summaryFor(name string) string {
	switch {
	case strings.HasPrefix(name, "doca_gpu_"):
		return "Failed to get all required DOCA GPUNetIO SDK symbols"
	case strings.HasPrefix(name, "doca_umem_"), strings.HasPrefix(name, "doca_uar_"):
		return "Failed to get all required DOCA Verbs UMEM SDK symbols"
	}
	return "Failed to get all required DOCA Verbs Dev SDK symbols"
}

func TestDecideMissingLibrary(t *testing.T) {
	for i, lib := range []string{LibCommon, LibVerbs, LibGPUNetIO} {
		t.Run(lib, func(t *testing.T) {
			ld, rec := newGoLoader(), &logRec{}
			ld.missingLibs[lib] = true
			d := decide(testDir, true, ld, rec.log)
			assert.Equal(t, Open, d.Mode)
			assert.Equal(t, []Message{
				errm(fmt.Sprintf("Failed to find %s library %s/%s (DOCA_SDK_LIB_PATH=%s)", lib, testDir, lib, testDir)),
				notFound,
			}, rec.lines)
			assert.Equal(t, fmt.Sprintf("dlopen %s/%s: %s/%s: cannot open shared object file: No such file or directory", testDir, lib, testDir, lib), d.Reason)
			assert.Len(t, ld.opens, i+1, "loading stops at the first failure")
			opened := []string{LibCommon, LibVerbs}[:i]
			var closedWant []string
			for j := len(opened) - 1; j >= 0; j-- {
				closedWant = append(closedWant, opened[j])
			}
			assert.Equal(t, closedWant, ld.closes, "what was opened is closed, in reverse order")
			assert.Nil(t, ld.bound, "nothing is bound")
			assert.Empty(t, d.Libraries)
			assert.Empty(t, d.Dir)
		})
	}
}

// Every mandatory symbol, missing alone, makes the whole process open mode
// with the reference's three lines.
func TestDecideMissingEachMandatorySymbol(t *testing.T) {
	mandatory, _ := Symbols()
	for _, name := range mandatory {
		t.Run(name, func(t *testing.T) {
			ld, rec := newGoLoader(), &logRec{}
			ld.missingSyms[name] = true
			d := decide(testDir, true, ld, rec.log)
			assert.Equal(t, Open, d.Mode)
			assert.Equal(t, []Message{
				errm("Failed to get symbol " + name + ": fake: undefined symbol: " + name),
				errm(summaryFor(name)),
				notFound,
			}, rec.lines)
			assert.Equal(t, "the DOCA SDK in "+testDir+" lacks 1 required symbol(s): "+name, d.Reason)
			assert.Equal(t, []string{LibGPUNetIO, LibVerbs, LibCommon}, ld.closes)
			assert.Nil(t, ld.bound)
		})
	}
}

func TestDecideMissingSymbolsInSeveralGroups(t *testing.T) {
	ld, rec := newGoLoader(), &logRec{}
	for _, s := range []string{"doca_verbs_qp_modify", "doca_uar_id_get", "doca_gpu_mem_free", "doca_verbs_cq_create"} {
		ld.missingSyms[s] = true
	}
	d := decide(testDir, true, ld, rec.log)
	assert.Equal(t, Open, d.Mode)
	assert.Equal(t, []Message{
		errm("Failed to get symbol doca_gpu_mem_free: fake: undefined symbol: doca_gpu_mem_free"),
		errm("Failed to get symbol doca_uar_id_get: fake: undefined symbol: doca_uar_id_get"),
		errm("Failed to get symbol doca_verbs_cq_create: fake: undefined symbol: doca_verbs_cq_create"),
		errm("Failed to get symbol doca_verbs_qp_modify: fake: undefined symbol: doca_verbs_qp_modify"),
		errm("Failed to get all required DOCA GPUNetIO SDK symbols"),
		errm("Failed to get all required DOCA Verbs Dev SDK symbols"),
		errm("Failed to get all required DOCA Verbs UMEM SDK symbols"),
		notFound,
	}, rec.lines, "every missing symbol in resolution order, then one summary per loader")
	assert.Equal(t, "the DOCA SDK in "+testDir+" lacks 4 required symbol(s): doca_gpu_mem_free, doca_uar_id_get, doca_verbs_cq_create, doca_verbs_qp_modify", d.Reason)
}

func TestDecideMissingOptional(t *testing.T) {
	const set, get = "doca_verbs_qp_init_attr_set_ordering_semantic", "doca_verbs_qp_init_attr_get_ordering_semantic"
	pair := warn("The DOCA SDK installed on the system doesn't provide symbols for the set/get ordering semantic")
	for _, c := range []struct {
		name     string
		missing  []string
		set, get bool
	}{
		{"both", []string{set, get}, false, false},
		{"set", []string{set}, false, true},
		{"get", []string{get}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ld, rec := newGoLoader(), &logRec{}
			var want []Message
			for _, s := range c.missing {
				ld.missingSyms[s] = true
				want = append(want, errm("Failed to get symbol "+s+": fake: undefined symbol: "+s))
			}
			want = append(want, pair)
			d := decide(testDir, true, ld, rec.log)
			assert.Equal(t, SDK, d.Mode, "a missing optional symbol keeps SDK mode")
			assert.Equal(t, want, rec.lines)
			assert.Equal(t, c.set, d.SetOrderingSemantic)
			assert.Equal(t, c.get, d.GetOrderingSemantic)
			assert.Equal(t, c.set, ld.bound[symQPInitAttrSetOrderingSemantic] != 0)
			assert.Equal(t, c.get, ld.bound[symQPInitAttrGetOrderingSemantic] != 0)
			assert.Empty(t, ld.closes)
		})
	}
}

// The optional symbols are not looked up, nor reported, when a mandatory
// one is missing: the SDK is not used at all.
func TestDecideOptionalIgnoredWhenFallingBack(t *testing.T) {
	ld, rec := newGoLoader(), &logRec{}
	ld.missingSyms["doca_verbs_qp_create"] = true
	ld.missingSyms["doca_verbs_qp_init_attr_set_ordering_semantic"] = true
	decide(testDir, true, ld, rec.log)
	assert.Len(t, rec.lines, 3)
	assert.NotContains(t, ld.lookups, "doca_verbs_qp_init_attr_set_ordering_semantic")
}

// The directory is joined with a plain "/" as in the reference, so a
// trailing slash shows in the paths it prints.
func TestDecidePlainJoin(t *testing.T) {
	ld, rec := newGoLoader(), &logRec{}
	ld.missingLibs[LibCommon] = true
	decide("rel/dir/", true, ld, rec.log)
	assert.Equal(t, "Failed to find libdoca_common.so library rel/dir//libdoca_common.so (DOCA_SDK_LIB_PATH=rel/dir/)", rec.lines[0].Text)
}

func TestSymbolTable(t *testing.T) {
	seen := map[string]bool{}
	nOptional := 0
	for i, s := range symbols {
		require.NotEmpty(t, s.name, "entry %d of the table is filled", i)
		assert.False(t, seen[s.name], "%s listed once", s.name)
		seen[s.name] = true
		assert.True(t, strings.HasPrefix(s.name, "doca_"), s.name)
		if s.optional {
			nOptional++
		}
	}
	assert.Equal(t, 100, len(symbols))
	assert.Equal(t, 2, nOptional)
	assert.Len(t, resolvedOnly, 3)
}

func TestDecisionString(t *testing.T) {
	assert.Equal(t, "open (DOCA_SDK_LIB_PATH is not set)", decide("", false, newGoLoader(), nil).String())
	ld := newGoLoader()
	assert.Equal(t, "SDK (libraries from /opt/doca/lib)", decide(testDir, true, ld, nil).String())
	ld = newGoLoader()
	ld.missingSyms["doca_verbs_qp_init_attr_get_ordering_semantic"] = true
	assert.Equal(t, "SDK (libraries from /opt/doca/lib; no get_ordering_semantic)", decide(testDir, true, ld, nil).String())
	ld = newGoLoader()
	ld.missingSyms["doca_verbs_qp_init_attr_set_ordering_semantic"] = true
	ld.missingSyms["doca_verbs_qp_init_attr_get_ordering_semantic"] = true
	assert.Equal(t, "SDK (libraries from /opt/doca/lib; no QP ordering semantic)", decide(testDir, true, ld, nil).String())
}

func TestLogTexts(t *testing.T) {
	assert.Equal(t, "ERR", LevelErr.String())
	assert.Equal(t, "WARNING", LevelWarning.String())
	assert.Equal(t, "INFO", LevelInfo.String())
	assert.Equal(t, "Level(7)", Level(7).String())
	assert.Equal(t, "WARNING: x", Message{LevelWarning, "x"}.String())
	assert.Equal(t, "SDK", SDK.String())
	assert.Equal(t, "open", Open.String())
	assert.Equal(t, "Mode(5)", Mode(5).String())

	assert.Equal(t, "Use DOCA GPUNetIO SDK", MsgUse(ObjGPU, SDK))
	assert.Equal(t, "Use DOCA Verbs qp open", MsgUse(ObjQP, Open))
	assert.Equal(t, "Use DOCA Verbs QP Init Attr SDK", MsgUse(ObjQPInitAttr, SDK))
	assert.Equal(t, "Use DOCA Verbs CQ Attr open", MsgUse(ObjCQAttr, Open))
	assert.Equal(t, "", MsgUse(Object(99), SDK))
	m, ok := MsgCreated(ObjAHAttr, 0x55d0c0ffee10)
	assert.True(t, ok)
	assert.Equal(t, "doca_verbs_verbs_ah_open=0x55d0c0ffee10 was created", m)
	m, ok = MsgCreated(ObjDev, 0)
	assert.True(t, ok)
	assert.Equal(t, "doca_verbs_dev_open=(nil) was created", m, "glibc prints a NULL %p as (nil)")
	_, ok = MsgCreated(ObjGPU, 1)
	assert.False(t, ok)
	assert.Equal(t, "doca_verbs_uar_open allocation failed", MsgAllocFailed(ObjUAR))
	assert.Equal(t, "error in doca_gpu_create: failed to allocate memory for doca_gpu_open", MsgAllocFailed(ObjGPU))
	assert.Equal(t, "", MsgAllocFailed(Object(-1)))

	assert.Equal(t, "DOCA_ERROR_DEVICE_FATAL_ERROR", Code(31).Name())
	assert.Equal(t, "DOCA_SUCCESS", CodeSuccess.Error())
	assert.Equal(t, "DOCA_ERROR_32", Code(32).Name())
	assert.Equal(t, "DOCA_ERROR_-1", Code(-1).Name())
}

func TestSetLogger(t *testing.T) {
	prev := logger.Load()
	defer logger.Store(prev)
	var got []Message
	SetLogger(func(l Level, s string) { got = append(got, Message{l, s}) })
	logf(LevelErr, "a %d", 1)
	SetLogger(nil)
	logf(LevelErr, "dropped")
	assert.Equal(t, []Message{errm("a 1")}, got)
}
