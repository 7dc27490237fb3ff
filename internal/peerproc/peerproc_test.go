package peerproc

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const childEnv = "PEERPROC_TEST_CHILD"

// TestChildSide echoes what the parent sends, upper-cased, and ignores
// lines of another tag; it runs only as the child of TestParentSide.
func TestChildSide(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs only as the peer process of TestParentSide")
	}
	Say("PP", "HELLO %d", 7)
	Serve("PP", func(word string, args []string) {
		Say("PP", "%s %s", word, strings.ToUpper(strings.Join(args, " ")))
	})
}

// The parent sees the child's lines in order, with the words after the
// first; the child stops on QUIT at cleanup and exits 0.
func TestParentSide(t *testing.T) {
	p := Start(t, "PP", "TestChildSide", childEnv+"=1")
	assert.Equal(t, []string{"7"}, p.Expect(t, "HELLO"))
	p.Send("OTHER x")
	assert.Equal(t, []string{"X"}, p.Expect(t, "OTHER"))
	p.Send("ECHO a b")
	assert.Equal(t, []string{"A", "B"}, p.Expect(t, "ECHO"))
}

// Stop returns with the child stopped: it answers nothing until Continue,
// then answers what it was sent meanwhile.
func TestStopContinue(t *testing.T) {
	p := Start(t, "PP", "TestChildSide", childEnv+"=1")
	assert.Equal(t, []string{"7"}, p.Expect(t, "HELLO"))
	p.Stop(t)
	running, err := runningThreads(p.cmd.Process.Pid)
	require.NoError(t, err)
	assert.Empty(t, running, "threads still running after Stop")
	p.Send("ECHO stopped")
	select {
	case f := <-p.lines:
		t.Fatalf("a stopped child answered %v", f)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, p.Continue())
	assert.Equal(t, []string{"STOPPED"}, p.Expect(t, "ECHO"))
}

// Stop on a child that has exited fails the test, saying so, instead of
// waiting for it to stop.
func TestStopExitedChild(t *testing.T) {
	p := Start(t, "PP", "TestChildSide", childEnv+"=1")
	p.Expect(t, "HELLO")
	p.Send("QUIT")
	// The child exits; nobody waits for it until the cleanup, so it stays a
	// zombie.
	require.Eventually(t, func() bool {
		_, err := runningThreads(p.cmd.Process.Pid)
		return err != nil
	}, Wait, time.Millisecond, "the child did not exit after QUIT")
	ft := &fatalTB{TB: t}
	start := time.Now()
	func() {
		defer func() { recover() }()
		p.Stop(ft)
	}()
	assert.Contains(t, ft.msg, "has exited")
	// Waiting for the threads of an exited child would take Wait.
	assert.Less(t, time.Since(start), Wait/2, "Stop waited for an exited child")
}

// fatalTB records Fatalf's message and ends the calling function with a
// panic that the caller recovers.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f.msg)
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f.msg)
}

func TestThreadState(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want byte
		bad  bool
	}{
		{stat: "1234 (peerproc.test) T 1 1234 1234 0 -1", want: 'T'},
		{stat: "1234 (a (b) c) S 1 2", want: 'S'},
		{stat: "1234 (x) R", want: 'R'},
		{stat: "1234 (x)", bad: true},
		{stat: "1234 (x)T", bad: true},
		{stat: "1234 x S", bad: true},
		{stat: "", bad: true},
	} {
		st, err := threadState([]byte(tc.stat))
		if tc.bad {
			assert.Error(t, err, "%q", tc.stat)
			continue
		}
		require.NoError(t, err, "%q", tc.stat)
		assert.Equal(t, tc.want, st, "%q", tc.stat)
	}
}

func FuzzThreadState(f *testing.F) {
	f.Add([]byte("1234 (peerproc.test) T 1 1234"))
	f.Add([]byte("1 ()) ) R"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := threadState(b)
		if err == nil {
			i := bytes.LastIndexByte(b, ')')
			if st != b[i+2] {
				t.Fatalf("state %c, not the field after the last paren of %q", st, b)
			}
		}
	})
}

const runChildEnv = "PEERPROC_TEST_RUN_CHILD"

// TestRunChild passes, fails or skips as runChildEnv says; it runs only as
// the child of TestRunTests.
func TestRunChild(t *testing.T) {
	switch os.Getenv(runChildEnv) {
	case "pass":
	case "fail":
		t.Fatal("failing as asked")
	case "skip", "":
		t.Skip("runs only as the child of TestRunTests")
	}
}

// TestRunChildToo passes in the child; a name that starts like another's.
func TestRunChildToo(t *testing.T) {
	if os.Getenv(runChildEnv) == "" {
		t.Skip("runs only as the child of TestRunTests")
	}
}

// runFatal runs RunTests on f and returns its failure message ("" if none).
func runFatal(t *testing.T, env []string, tests ...string) string {
	f := &fatalTB{TB: t}
	func() {
		defer func() { recover() }()
		RunTests(f, env, tests...)
	}()
	return f.msg
}

// RunTests passes only when the child exits 0 and every named test passed
// in it: a failing, a skipping and an unknown test each fail it, naming
// the test, and so does an empty list.
func TestRunTests(t *testing.T) {
	RunTests(t, []string{runChildEnv + "=pass"}, "TestRunChild", "TestRunChildToo")
	msg := runFatal(t, []string{runChildEnv + "=fail"}, "TestRunChild")
	assert.Contains(t, msg, "exit status 1")
	assert.Contains(t, msg, "failing as asked")
	msg = runFatal(t, []string{runChildEnv + "=skip"}, "TestRunChild")
	assert.Contains(t, msg, "TestRunChild did not pass")
	msg = runFatal(t, []string{runChildEnv + "=pass"}, "TestRunChild", "TestNoSuchTest")
	assert.Contains(t, msg, "TestNoSuchTest did not pass")
	assert.Contains(t, runFatal(t, nil), "no test named")
}
