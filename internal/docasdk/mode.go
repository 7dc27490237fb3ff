package docasdk

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// EnvLibPath names the directory holding the DOCA SDK libraries. Set and
// non-empty, it asks for SDK mode; unset or empty, it means open mode.
const EnvLibPath = "DOCA_SDK_LIB_PATH"

// Mode says which implementation runs the control path. The values are
// those of DOCA's doca_verbs_lib_type / doca_gpu_lib_type.
type Mode int

const (
	// Open is the open implementation of this module (verbs on the mlx5
	// driver boundary, gpunetio on the CUDA driver API).
	Open Mode = 0
	// SDK forwards the control path to NVIDIA's DOCA SDK libraries.
	SDK Mode = 1
)

// Decision is the mode this process runs in and how it was chosen. It is
// taken once, on the first call of this package, and never changes.
type Decision struct {
	Mode Mode
	// EnvSet says whether DOCA_SDK_LIB_PATH was present; Env is its value
	// (both as read at the decision).
	EnvSet bool
	Env    string
	// Dir is the library directory in use (SDK mode; "" in open mode).
	Dir string
	// Libraries are the paths opened, in load order (SDK mode).
	Libraries []string
	// Reason says why open mode was chosen ("" in SDK mode): the variable
	// is unset or empty, a library did not load (with dlerror), or
	// mandatory symbols are missing (named).
	Reason string
	// SetOrderingSemantic and GetOrderingSemantic say whether the SDK
	// provides the two optional entry points (SDK mode only).
	SetOrderingSemantic bool
	GetOrderingSemantic bool
	// Log holds the lines printed while deciding, in order, so that a
	// logger installed later (or the doctor) can show them.
	Log []Message
}

// String is a one-line summary for `gpunetio version` and the doctor, e.g.
// "SDK (libraries from /opt/mellanox/doca/lib/x86_64-linux-gnu)" or
// "open (DOCA_SDK_LIB_PATH is not set)".
func (d Decision) String() string {
	if d.Mode == SDK {
		s := "SDK (libraries from " + d.Dir
		switch {
		case !d.SetOrderingSemantic && !d.GetOrderingSemantic:
			s += "; no QP ordering semantic"
		case !d.SetOrderingSemantic:
			s += "; no set_ordering_semantic"
		case !d.GetOrderingSemantic:
			s += "; no get_ordering_semantic"
		}
		return s + ")"
	}
	return "open (" + d.Reason + ")"
}

func (d Decision) clone() Decision {
	d.Libraries = append([]string(nil), d.Libraries...)
	d.Log = append([]Message(nil), d.Log...)
	return d
}

var (
	decideOnce sync.Once
	decided    Decision
	active     atomic.Bool
	// printed is set by the goroutine that prints the decision's lines.
	printed atomic.Bool
)

// ensureDecided takes the decision once and then prints its lines, outside
// the Once, so that a Logger may itself call this package without
// deadlocking. Concurrent first callers may return before the printing
// goroutine is done.
func ensureDecided() {
	decideOnce.Do(decideNow)
	if !printed.Load() && printed.CompareAndSwap(false, true) {
		for _, m := range decided.Log {
			emit(m.Level, m.Text)
		}
	}
}

// Current returns the process's mode decision, taking it on the first call
// (of Current or of any SDK call in this package): SDK mode only if
// DOCA_SDK_LIB_PATH is set and non-empty and every library and every
// mandatory symbol loads; open mode otherwise. The variable is read once;
// changing it later changes nothing. Safe for concurrent use.
func Current() Decision {
	ensureDecided()
	return decided.clone()
}

// Active reports whether the process runs in SDK mode (deciding it first if
// needed).
func Active() bool {
	ensureDecided()
	return active.Load()
}

func decideNow() {
	v, set := os.LookupEnv(EnvLibPath)
	decided = decide(v, set, systemLoader{}, nil)
	active.Store(decided.Mode == SDK)
}

// loader is the dynamic loader as the decision uses it. systemLoader is
// dlopen/dlsym (or, without cgo, a loader that opens nothing); tests play
// other loaders to walk every branch.
type loader interface {
	open(path string, global bool) (handle uintptr, err string)
	sym(handle uintptr, name string) (fn uintptr, err string)
	close(handle uintptr)
	// bind installs the resolved entry points (fns[i] for symbol i,
	// 0 where an optional one is missing) for the calls.
	bind(fns []uintptr)
}

// decide takes the mode decision for the given value of DOCA_SDK_LIB_PATH.
// Every line it prints goes to out and into Decision.Log.
func decide(env string, set bool, ld loader, out func(Level, string)) Decision {
	d := Decision{Mode: Open, EnvSet: set, Env: env}
	say := func(l Level, format string, args ...any) {
		m := Message{Level: l, Text: fmt.Sprintf(format, args...)}
		d.Log = append(d.Log, m)
		if out != nil {
			out(m.Level, m.Text)
		}
	}

	if !set || env == "" {
		// The reference prints the getenv result: "(null)" when unset.
		shown := env
		d.Reason = EnvLibPath + " is empty"
		if !set {
			shown = "(null)"
			d.Reason = EnvLibPath + " is not set"
		}
		say(LevelWarning, fmtEnvNotSet, shown)
		return d
	}

	// The directory is joined with a plain "/", as the reference does, so
	// the paths in the log are the reference's.
	var handles [libCount]uintptr
	closeAll := func() {
		for l := libCount - 1; l >= 0; l-- {
			if handles[l] != 0 {
				ld.close(handles[l])
				handles[l] = 0
			}
		}
	}
	var paths []string
	for l := lib(0); l < libCount; l++ {
		path := env + "/" + libNames[l]
		h, why := ld.open(path, libGlobal[l])
		if h == 0 {
			say(LevelErr, fmtLibNotFound, libNames[l], path, env)
			closeAll()
			say(LevelWarning, fmtEnvNotFound, env)
			d.Reason = fmt.Sprintf("dlopen %s: %s", path, why)
			return d
		}
		handles[l] = h
		paths = append(paths, path)
	}

	fns := make([]uintptr, symCount)
	var missing []string
	var missingGroup [groupCount]bool
	for i, s := range symbols {
		if s.optional {
			continue
		}
		fn, why := ld.sym(handles[s.lib], s.name)
		if fn == 0 {
			say(LevelErr, fmtSymbolMissing, s.name, why)
			missing = append(missing, s.name)
			missingGroup[s.group] = true
			continue
		}
		fns[i] = fn
	}
	if len(missing) > 0 {
		for g := group(0); g < groupCount; g++ {
			if missingGroup[g] {
				say(LevelErr, "%s", groupMissing[g])
			}
		}
		closeAll()
		say(LevelWarning, fmtEnvNotFound, env)
		d.Reason = fmt.Sprintf("the DOCA SDK in %s lacks %d required symbol(s): %s",
			env, len(missing), strings.Join(missing, ", "))
		return d
	}

	optionalMissing := false
	for i, s := range symbols {
		if !s.optional {
			continue
		}
		fn, why := ld.sym(handles[s.lib], s.name)
		if fn == 0 {
			say(LevelErr, fmtSymbolMissing, s.name, why)
			optionalMissing = true
			continue
		}
		fns[i] = fn
	}
	if optionalMissing {
		say(LevelWarning, "%s", msgNoOrderingPair)
	}

	ld.bind(fns)
	d.Mode = SDK
	d.Dir = env
	d.Libraries = paths
	d.SetOrderingSemantic = fns[symQPInitAttrSetOrderingSemantic] != 0
	d.GetOrderingSemantic = fns[symQPInitAttrGetOrderingSemantic] != 0
	return d
}
