package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/verbs"
)

// TestWaitCQWR runs the sample on emu0 in this process, as the DOCA sample
// runs on one device, and checks every iteration's report.
func TestWaitCQWR(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-d", "emu0", "-n", "20", "-s", "256"}, &out, io.Discard), out.String())
	t.Log(out.String())
	s := out.String()
	assert.Contains(t, s, "device emu0: QP A 0x")
	for i := 0; i < 20; i++ {
		assert.Contains(t, s, fmt.Sprintf("iteration %d: QP B's WAIT on CQ 0x", i))
		assert.Contains(t, s, fmt.Sprintf(" index %d released after QP A's SEND completed", i), "the wait index follows A's send CQ")
	}
	assert.True(t, strings.HasSuffix(s, "20 iterations: QP B's SEND waited for QP A's completion every time\nsample finished successfully\n"), s)
	assert.Empty(t, verbs.LeakReport())
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-s", "4"}, "-s 4"},
		{[]string{"-n", "0"}, "-n 0"},
		{[]string{"-gid", "256"}, "-gid 256"},
		{[]string{"x"}, "unexpected arguments"},
	} {
		_, err := parse(c.args, io.Discard)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want)
	}
	err := run([]string{"-d", "nosuchdevice"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, `open RDMA device "nosuchdevice"`)
	assert.Empty(t, verbs.LeakReport())
}
