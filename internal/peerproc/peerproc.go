// Package peerproc runs the other side of a cross-process test: the test
// binary re-executes itself to run one test as a child process, and the two
// talk in text lines that start with a tag ("VERBS HELLO ..."), the parent
// writing to the child's standard input and the child printing to its
// standard output. Lines without the tag are the child's own test output:
// the parent copies them to its standard error, so a failure in the child
// is seen.
package peerproc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Wait bounds how long the parent waits for a line from the child and for
// the child to exit.
const Wait = 20 * time.Second

// Proc is a running child.
type Proc struct {
	tag   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []string
}

// RunTests runs the tests named (of this binary, each matched exactly) in
// a child process with env ("K=V") added to this process's environment,
// for a test that needs a process where nothing else ran first. tb fails
// unless the child exits with status 0 and every named test passed in it
// (a test that skipped or did not run fails it too); its output is in the
// failure message.
func RunTests(tb testing.TB, env []string, tests ...string) {
	tb.Helper()
	if len(tests) == 0 {
		tb.Fatal("peerproc.RunTests: no test named")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^("+strings.Join(tests, "|")+")$", "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("child process of %s: %v; its output:\n%s", strings.Join(tests, ", "), err, out)
	}
	for _, name := range tests {
		if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
			tb.Fatalf("child process: %s did not pass; its output:\n%s", name, out)
		}
	}
}

// Start runs test (a test name of this binary, matched exactly) in a child
// process with env ("K=V") added to this process's environment. At tb's
// cleanup the child is told "QUIT" and waited for; it must exit with
// status 0 within Wait, or tb fails (and the child is killed).
func Start(tb testing.TB, tag, test string, env ...string) *Proc {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatalf("peer process: stdin: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("peer process: stdout: %v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("peer process: %v", err)
	}
	p := &Proc{tag: tag, cmd: cmd, stdin: stdin, lines: make(chan []string, 16)}
	go p.read(stdout)
	tb.Cleanup(func() { p.stop(tb) })
	return p
}

func (p *Proc) read(stdout io.Reader) {
	s := bufio.NewScanner(stdout)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) >= 2 && f[0] == p.tag {
			p.lines <- f[1:]
		} else if len(f) > 0 && f[0] != "PASS" {
			fmt.Fprintln(os.Stderr, "peer:", s.Text())
		}
	}
	close(p.lines)
}

func (p *Proc) stop(tb testing.TB) {
	p.Continue() // a child left stopped could not read QUIT; fails only if it has exited
	p.Send("QUIT")
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			tb.Errorf("peer process: %v", err)
		}
	case <-time.After(Wait):
		p.cmd.Process.Kill()
		<-done
		tb.Error("peer process did not exit")
	}
}

// Send writes a line to the child: the tag, then format and args.
func (p *Proc) Send(format string, args ...any) {
	fmt.Fprintf(p.stdin, p.tag+" "+format+"\n", args...)
}

// Expect waits up to Wait for the child's next line, which must start with
// word, and returns the words after it.
func (p *Proc) Expect(tb testing.TB, word string) []string {
	tb.Helper()
	select {
	case f, ok := <-p.lines:
		if !ok {
			tb.Fatalf("peer exited before saying %s", word)
		}
		if f[0] != word {
			tb.Fatalf("peer said %v, want %s", f, word)
		}
		return f[1:]
	case <-time.After(Wait):
		tb.Fatalf("peer did not say %s", word)
	}
	return nil
}

// Say prints a line for the parent (in the child): the tag, then format and
// args.
func Say(tag, format string, args ...any) {
	fmt.Printf(tag+" "+format+"\n", args...)
}

// Serve reads the parent's lines (in the child) and hands each tagged one
// to handle as its first word and the words after it, until "QUIT" or the
// end of the input.
func Serve(tag string, handle func(word string, args []string)) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) < 2 || f[0] != tag {
			continue
		}
		if f[1] == "QUIT" {
			return
		}
		handle(f[1], f[2:])
	}
}

// Signal sends sig to the child.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop stops the child with SIGSTOP and returns once every thread of it is
// stopped, so that from then on it runs no code at all (the kernel still
// accepts connections to its listening sockets). The signal alone does not
// promise that: kill returns while a thread of the child that is running
// on another processor goes on until the kernel interrupts it, long enough
// on a loaded machine to answer a packet sent just after. Stop fails tb if
// the child is not stopped within Wait; Continue resumes it.
func (p *Proc) Stop(tb testing.TB) {
	tb.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("peer process: SIGSTOP: %v", err)
	}
	deadline := time.Now().Add(Wait)
	for {
		running, err := runningThreads(p.cmd.Process.Pid)
		if err != nil {
			tb.Fatalf("peer process: after SIGSTOP: %v", err)
		}
		if len(running) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("peer process: threads %v not stopped %v after SIGSTOP", running, Wait)
		}
		time.Sleep(time.Millisecond)
	}
}

// Continue resumes a child stopped by Stop (SIGCONT).
func (p *Proc) Continue() error { return p.Signal(syscall.SIGCONT) }

// runningThreads returns the threads of process pid that are not stopped,
// each as "tid:state", from /proc/<pid>/task/<tid>/stat. A thread that has
// exited meanwhile is not listed; a process that has exited is an error.
func runningThreads(pid int) ([]string, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("threads of %d: %w", pid, err)
	}
	var running []string
	for _, tid := range tids {
		stat, err := os.ReadFile(dir + "/" + tid.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited
		}
		if err != nil {
			return nil, fmt.Errorf("thread %s of %d: %w", tid.Name(), pid, err)
		}
		st, err := threadState(stat)
		if err != nil {
			return nil, fmt.Errorf("thread %s of %d: %w", tid.Name(), pid, err)
		}
		switch st {
		case 'T', 't': // stopped by a signal, or stopped under a tracer
		case 'Z', 'X':
			return nil, fmt.Errorf("process %d has exited (thread %s state %c)", pid, tid.Name(), st)
		default:
			running = append(running, fmt.Sprintf("%s:%c", tid.Name(), st))
		}
	}
	return running, nil
}

// threadState returns the state letter of a /proc/<pid>/task/<tid>/stat
// line: "tid (comm) S ...", where comm may itself hold spaces and parens,
// so the state is the first field after the last ')'.
func threadState(stat []byte) (byte, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+1] != ' ' {
		return 0, fmt.Errorf("stat %q: no state field", stat)
	}
	return stat[i+2], nil
}
