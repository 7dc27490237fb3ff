//go:build cgo

package docasdk

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// The test binary plays two roles. Run by `go test`, it builds the fake SDK
// (package fakesdk) with the system C compiler and runs the tests in SDK
// mode on it: DOCA_SDK_LIB_PATH points at the fake before anything decides
// the mode. The mode is latched per process, so the tests of the other
// decisions re-execute the binary as a child (childEnv names a scenario,
// see child_test.go), which reports what it saw as JSON.
func TestMain(m *testing.M) {
	if scenario := os.Getenv(childEnv); scenario != "" {
		os.Exit(runChild(scenario))
	}
	os.Exit(runParent(m))
}

var (
	// fake is the built stand-in, or nil with fakeSkip (no compiler) or
	// fakeErr (the build failed) saying why.
	fake     *fakeSDK
	fakeSkip string
	fakeErr  error
	// parentLog is the fake's call log of this process.
	parentLog *callLog
	// captured holds every line this process logged.
	captured lineLog
)

func runParent(m *testing.M) int {
	SetLogger(captured.add)
	for _, v := range []string{EnvLibPath, "FAKE_DOCA_LOG", "FAKE_DOCA_FAIL"} {
		os.Unsetenv(v)
	}
	root, err := os.MkdirTemp("", "docasdk-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(root)
	fake, fakeSkip, fakeErr = buildFake(root)
	if fake != nil {
		parentLog = &callLog{path: root + "/parent-calls.log"}
		os.Setenv(EnvLibPath, fake.full())
		os.Setenv("FAKE_DOCA_LOG", parentLog.path)
	}
	return m.Run()
}

// needFake skips a test when no C compiler exists and fails it when the
// fake does not build.
func needFake(t *testing.T) *fakeSDK {
	t.Helper()
	if fakeErr != nil {
		t.Fatalf("building the fake DOCA SDK: %v", fakeErr)
	}
	if fake == nil {
		t.Skip(fakeSkip)
	}
	return fake
}

// lineLog collects logged lines; safe for concurrent use.
type lineLog struct {
	mu    sync.Mutex
	lines []Message
}

func (l *lineLog) add(level Level, msg string) {
	l.mu.Lock()
	l.lines = append(l.lines, Message{level, msg})
	l.mu.Unlock()
}

func (l *lineLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func (l *lineLog) since(mark int) []Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Message(nil), l.lines[mark:]...)
}
