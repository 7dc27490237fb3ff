package gpunetio

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/doclog"
	"github.com/gdaki/gpunetio/verbs"
)

// With LogFormatDOCA a message of the library is DOCA's line: the ctime
// date, the level, and the file, line and function of the code that
// logged it.
func TestLogFormatDOCA(t *testing.T) {
	var buf bytes.Buffer
	oldLevel, oldFormat := doclog.Level(), doclog.CurrentFormat()
	SetLogLevel(LogInfo)
	SetLogFormat(LogFormatDOCA)
	SetLogOutput(&buf)
	t.Cleanup(func() {
		SetLogLevel(LogLevel(oldLevel))
		SetLogFormat(LogFormat(oldFormat))
		SetLogOutput(nil)
	})

	g, _ := hostGPU(t)
	s := newSide(t, "emu0")
	_, err := NewQPHL(QPHLConfig{GPU: g, PD: s.pd, SQWQEs: 8, OrderingSemantic: verbs.OrderingOOORW})
	require.ErrorIs(t, err, ErrNotSupported)
	assert.Regexp(t, `(?m)^\w{3} \w{3} [ 1-3]\d \d\d:\d\d:\d\d \d{4} \[INFO\] \[dev\.go\]: \d+: OpenDev\(\): Use DOCA Verbs Dev open$`, buf.String(),
		"verbs' creators are named, not its logging helpers")
	assert.Regexp(t, `(?m)^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ 1-3]\d \d\d:\d\d:\d\d \d{4} \[INFO\] \[hl\.go\]: \d+: checkHL\(\): .*set_ordering_semantic not supported`, buf.String())
}
