package leaktest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
)

func TestMain(m *testing.M) { Main(m) }

// A leaked object fails a passing run and is named with the stack that made
// it; a failing run keeps its status; no leak, no change.
func TestCheck(t *testing.T) {
	var out bytes.Buffer
	assert.Equal(t, 0, Check(0, &out))
	assert.Empty(t, out.String())

	ctx, err := verbs.OpenDevice("emu0")
	require.NoError(t, err)
	g := gpunetio.NewHostGPU()
	assert.Equal(t, 1, Check(0, &out))
	assert.Equal(t, 2, Check(2, &out))
	r := out.String()
	assert.Contains(t, r, "Context: Context emu0")
	assert.Contains(t, r, "GPU: host-memory test GPU")
	assert.Contains(t, r, "leaktest.TestCheck", "the stack that made each")
	require.NoError(t, g.Close())
	require.NoError(t, ctx.Close())
	out.Reset()
	assert.Equal(t, 0, Check(0, &out))
	assert.Empty(t, Reports())
}
