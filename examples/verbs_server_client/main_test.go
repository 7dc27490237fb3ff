package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envRunMain makes the test binary run the program instead of the tests,
// with the arguments in envArgs (one per line): the tests start the server
// and the client as two processes of this binary.
const (
	envRunMain = "GDAKI_VERBS_SERVER_CLIENT_MAIN"
	envArgs    = "GDAKI_VERBS_SERVER_CLIENT_ARGS"
)

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		args := strings.Split(os.Getenv(envArgs), "\n")
		if err := run(args, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "verbs_server_client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// program runs the program as a process with args; its output goes to out.
func program(ctx context.Context, args []string, out io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), envRunMain+"=1", envArgs+"="+strings.Join(args, "\n"))
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

var portLine = regexp.MustCompile(`server: waiting for a client on port (\d+)`)

// runPair runs a server on emu0 and a client on emu1 with the same flags
// and returns both outputs.
func runPair(t *testing.T, flags ...string) (server, client string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	var srvOut bytes.Buffer
	srv := program(ctx, append([]string{"-d", "emu0", "-port", "0", "-timeout", "40s"}, flags...), pw)
	require.NoError(t, srv.Start())
	srvDone := make(chan error, 1)
	go func() {
		err := srv.Wait()
		pw.Close()
		srvDone <- err
	}()
	port := ""
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		srvOut.WriteString(sc.Text() + "\n")
		if m := portLine.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
			break
		}
	}
	require.NotEmpty(t, port, "the server's output:\n%s", srvOut.String())
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&srvOut, pr) // until the server exits (pw closed)
		close(copied)
	}()

	var cliOut bytes.Buffer
	cli := program(ctx, append([]string{"-d", "emu1", "-c", "127.0.0.1", "-port", port, "-timeout", "40s"}, flags...), &cliOut)
	cliErr := cli.Run()
	srvErr := <-srvDone
	<-copied
	require.NoError(t, cliErr, "client:\n%s\nserver:\n%s", cliOut.String(), srvOut.String())
	require.NoError(t, srvErr, "server:\n%s\nclient:\n%s", srvOut.String(), cliOut.String())
	t.Logf("server:\n%s\nclient:\n%s", srvOut.String(), cliOut.String())
	return srvOut.String(), cliOut.String()
}

// TestServerClient runs every operation type as two processes, with bursts
// that do not divide the iteration count (the last burst is short).
func TestServerClient(t *testing.T) {
	for _, c := range []struct {
		qt, op string
		events bool
	}{
		{"rc", "send", false}, {"rc", "write", false}, {"rc", "read", false}, {"uc", "send", false}, {"uc", "write", false},
		{"rc", "send", true}, {"rc", "write", true}, {"rc", "read", true},
	} {
		name := c.qt + "_" + c.op
		flags := []string{"-qt", c.qt, "-ro", c.op, "-s", "3000", "-n", "21", "-b", "4"}
		if c.events {
			name += "_events"
			flags = append(flags, "-e")
		}
		t.Run(name, func(t *testing.T) {
			srv, cli := runPair(t, flags...)
			if c.events {
				// The client waits for its own completions: at least one
				// event (the last burst's), whatever the timing.
				assert.Regexp(t, `client: waited for completions on a completion channel: [1-9]\d* events`, cli)
				assert.Contains(t, srv, "server: waited for completions on a completion channel: ")
			} else {
				assert.NotContains(t, cli+srv, "completion channel")
			}
			op := strings.ToUpper(c.op)
			for _, out := range []string{srv, cli} {
				assert.Contains(t, out, op+" of 3000 bytes, 21 iterations, burst 4")
				assert.Contains(t, out, "21 "+op+" operations completed, 63000 bytes")
				assert.Contains(t, out, "sample finished successfully")
			}
			checker := srv
			if c.op == "read" {
				checker = cli
			}
			assert.Contains(t, checker, "data verified")
			assert.Contains(t, srv, strings.ToUpper(c.qt)+" QP 0x")
		})
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ro", "atomic"}, `-ro "atomic": want send, write or read`},
		{[]string{"-qt", "ud"}, `-qt "ud": want rc or uc`},
		{[]string{"-qt", "uc", "-ro", "read"}, "UC has no RDMA READ"},
		{[]string{"-s", "0"}, "-s 0"},
		{[]string{"-n", "0"}, "-n 0"},
		{[]string{"-b", "0"}, "-b 0"},
		{[]string{"-b", "2000"}, "-b 2000"},
		{[]string{"-gid", "300"}, "-gid 300"},
		{[]string{"-c", "127.0.0.1", "-port", "0"}, "-port 0 is for the server only"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		_, err := parse(c.args, io.Discard)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want)
	}
	c, err := parse(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "send", c.op)
	assert.Equal(t, uint(1), c.burst)
	assert.Equal(t, "server", c.role())

	err = run([]string{"-d", "nosuchdevice"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, `open RDMA device "nosuchdevice"`)
}
