//go:build cgo

package docasdk

import (
	"context"
	"encoding/json"
	"errors"
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

const (
	childEnv  = "DOCASDK_TEST_CHILD"  // the scenario a child runs
	reportEnv = "DOCASDK_TEST_REPORT" // where it writes its report
	flipEnv   = "DOCASDK_TEST_FLIP"   // probe: what DOCA_SDK_LIB_PATH becomes after the first decision
	unset     = "<unset>"             // an env value meaning "remove the variable"
)

// childReport is what a child process saw.
type childReport struct {
	Decision Decision
	Logged   []Message         // every line the child's logger received
	Notes    map[string]string // scenario observations
	Mapped   []string          // libdoca_* objects still mapped at the end
	Calls    []string          // the fake's call log (filled in by the parent)
}

var scenarios = map[string]func(r *childReport){
	"probe":          probe,
	"concurrent":     concurrent,
	"gpunetio-first": gpunetioFirst,
	"reentrant":      reentrant,
}

// reentrant installs a logger that calls back into the package while the
// decision's lines are printed.
func reentrant(r *childReport) {
	var lines lineLog
	SetLogger(func(l Level, s string) {
		lines.add(l, s)
		_ = Current()
		_, _ = GPUCreate("0000:99:00.0")
		_ = Active()
	})
	r.Decision = Current()
	r.Notes["lines"] = fmt.Sprint(len(lines.since(0)))
}

// gpunetioFirst opens libdoca_gpunetio.so before the libraries it depends
// on, which must fail when the directory is not on the loader's path: what
// the load order avoids.
func gpunetioFirst(r *childReport) {
	dir := os.Getenv(EnvLibPath)
	h, why := systemLoader{}.open(dir+"/"+LibGPUNetIO, false)
	r.Notes["opened"] = fmt.Sprint(h != 0)
	r.Notes["error"] = why
	if h != 0 {
		systemLoader{}.close(h)
	}
}

func runChild(scenario string) int {
	var lines lineLog
	SetLogger(lines.add)
	r := &childReport{Notes: map[string]string{}}
	f, ok := scenarios[scenario]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown scenario %q\n", scenario)
		return 2
	}
	f(r)
	r.Logged = lines.since(0)
	r.Mapped = mappedDOCA()
	b, err := json.Marshal(r)
	if err == nil {
		err = os.WriteFile(os.Getenv(reportEnv), b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func errNote(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// probe decides, tries the SDK, and then changes DOCA_SDK_LIB_PATH (as
// flipEnv says) to show that nothing changes any more.
func probe(r *childReport) {
	r.Decision = Current()
	g, err := GPUCreate("0000:01:00.0")
	r.Notes["gpu_create"] = errNote(err)
	r.Notes["gpu_create_not_active"] = fmt.Sprint(errors.Is(err, ErrNotActive))
	if err == nil {
		r.Notes["gpu_destroy"] = errNote(g.Destroy())
	}
	if Active() {
		a, err := QPInitAttrCreate()
		r.Notes["init_attr_create"] = errNote(err)
		err = a.SetOrderingSemantic(2)
		r.Notes["set_ordering"] = errNote(err)
		r.Notes["set_ordering_missing"] = fmt.Sprint(errors.Is(err, ErrNoOrderingSemantic))
		v, err := a.OrderingSemantic()
		r.Notes["get_ordering"] = errNote(err)
		r.Notes["get_ordering_missing"] = fmt.Sprint(errors.Is(err, ErrNoOrderingSemantic))
		r.Notes["get_ordering_value"] = fmt.Sprint(v)
		r.Notes["init_attr_destroy"] = errNote(a.Destroy())
	}
	if v, ok := os.LookupEnv(flipEnv); ok {
		if v == unset {
			os.Unsetenv(EnvLibPath)
		} else {
			os.Setenv(EnvLibPath, v)
		}
		d := Current()
		r.Notes["mode_after_flip"] = d.Mode.String()
		r.Notes["log_after_flip"] = fmt.Sprint(len(d.Log))
		g, err := GPUCreate("0000:02:00.0")
		r.Notes["gpu_create_after_flip"] = errNote(err)
		if err == nil {
			r.Notes["gpu_destroy_after_flip"] = errNote(g.Destroy())
		}
	}
}

// concurrent makes the first use of the package from many goroutines at
// once: half ask for the decision, half create a GPU handle.
func concurrent(r *childReport) {
	const n = 32
	var (
		start, made sync.WaitGroup
		mu          sync.Mutex
		modes       = map[string]bool{}
		addrs       = map[uintptr]bool{}
		errs        []string
	)
	start.Add(1)
	made.Add(n)
	var done sync.WaitGroup
	for i := 0; i < n; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			start.Wait()
			if i%2 == 0 {
				d := Current()
				mu.Lock()
				modes[d.Mode.String()] = true
				mu.Unlock()
				made.Done()
				return
			}
			g, err := GPUCreate(fmt.Sprintf("0000:%02x:00.0", i))
			mu.Lock()
			if err != nil {
				errs = append(errs, err.Error())
			} else {
				addrs[g.Addr()] = true
			}
			mu.Unlock()
			made.Done()
			made.Wait() // every handle is alive at once: their addresses are distinct
			if err == nil {
				if err := g.Destroy(); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
		}(i)
	}
	start.Done()
	done.Wait()
	r.Decision = Current()
	var ms []string
	for m := range modes {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	sort.Strings(errs)
	r.Notes["modes"] = strings.Join(ms, ",")
	r.Notes["created"] = fmt.Sprint(len(addrs))
	r.Notes["errors"] = fmt.Sprint(len(errs))
	if len(errs) > 0 {
		r.Notes["first_error"] = errs[0]
	}
}

// mappedDOCA lists the libdoca_* files mapped into this process.
func mappedDOCA() []string {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return []string{"(cannot read /proc/self/maps: " + err.Error() + ")"}
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.Contains(f[5], "libdoca_") || seen[f[5]] {
			continue
		}
		seen[f[5]] = true
		out = append(out, f[5])
	}
	sort.Strings(out)
	return out
}

// runChildTest runs scenario in a fresh process of this test binary with
// env applied over this process's environment (minus the variables the
// tests control) and returns its report, with the fake's call log.
func runChildTest(t *testing.T, scenario string, env map[string]string) childReport {
	t.Helper()
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	calls := &callLog{path: filepath.Join(dir, "calls.log")}
	controlled := map[string]bool{EnvLibPath: true, "FAKE_DOCA_LOG": true, "FAKE_DOCA_FAIL": true,
		childEnv: true, reportEnv: true, flipEnv: true, "GORACE": true}
	var environ []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !controlled[k] {
			environ = append(environ, kv)
		}
	}
	// A race-enabled child would sleep a second before exiting; its race
	// reports still make it exit non-zero.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	environ = append(environ, childEnv+"="+scenario, reportEnv+"="+report, "FAKE_DOCA_LOG="+calls.path,
		"GORACE="+gorace)
	for k, v := range env {
		if v != unset || k == flipEnv {
			environ = append(environ, k+"="+v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", scenario, err, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("child %s wrote no report: %v\n%s", scenario, err, out)
	}
	var r childReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("child %s: bad report: %v", scenario, err)
	}
	r.Calls = calls.lines()
	return r
}
