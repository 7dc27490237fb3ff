package doclog

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docaOutput switches to FormatDOCA at level lv, writing to the returned
// buffer with the clock fixed at 2026-04-01 10:42:00, until the test ends.
func docaOutput(t *testing.T, lv int32) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	oldLevel, oldFormat := Level(), CurrentFormat()
	SetLevel(lv)
	SetFormat(FormatDOCA)
	SetOutput(&buf)
	now = func() time.Time { return time.Date(2026, 4, 1, 10, 42, 0, 0, time.Local) }
	t.Cleanup(func() {
		SetLevel(oldLevel)
		SetFormat(oldFormat)
		SetOutput(nil)
		now = time.Now
	})
	return &buf
}

// logHere logs msg at l and returns the line it logged from.
func logHere(l int32, msg string) int {
	_, _, line, _ := runtime.Caller(0)
	Printf(l, "%s", msg) // the line after the Caller call
	return line + 1
}

func TestDOCAFormat(t *testing.T) {
	buf := docaOutput(t, Info)
	line := logHere(Info, "opened the device")
	logHere(Debug, "not printed at INFO")
	l2 := logHere(Err, "a failure")
	want := fmt.Sprintf("Wed Apr  1 10:42:00 2026 [INFO] [doclog_test.go]: %d: logHere(): opened the device\n", line) +
		fmt.Sprintf("Wed Apr  1 10:42:00 2026 [ERR] [doclog_test.go]: %d: logHere(): a failure\n", l2)
	assert.Equal(t, want, buf.String())
}

// A message relayed by the SDK loader names the code that logged it, not
// the relay.
func TestDOCAFormatNamesTheCaller(t *testing.T) {
	buf := docaOutput(t, Debug)
	func() { Print(Warning, "from a closure") }()
	assert.Regexp(t, `^Wed Apr  1 10:42:00 2026 \[WARNING\] \[doclog_test.go\]: \d+: TestDOCAFormatNamesTheCaller\.func1\(\): from a closure\n$`, buf.String())
}

func TestParseFormat(t *testing.T) {
	for v, want := range map[string]Format{"doca": FormatDOCA, " DOCA ": FormatDOCA, "": FormatStructured, "json": FormatStructured, "text": FormatStructured} {
		assert.Equal(t, want, ParseFormat(v), "%q", v)
	}
}

// The structured output stays the default and is unaffected by the DOCA
// writer.
func TestStructuredFormat(t *testing.T) {
	var buf bytes.Buffer
	oldLevel := Level()
	SetLevel(Warning)
	SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { SetLevel(oldLevel); SetLogger(nil) })
	require.Equal(t, FormatStructured, CurrentFormat())
	Printf(Warning, "careful: %d", 7)
	Printf(Info, "quiet")
	out := buf.String()
	assert.Contains(t, out, `level=WARN msg="careful: 7" doca_level=WARNING`)
	assert.False(t, strings.Contains(out, "quiet"))
}
