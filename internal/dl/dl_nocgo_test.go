//go:build !cgo

package dl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/dl"
)

// Without cgo every Open fails, naming the library and why.
func TestOpenWithoutCgo(t *testing.T) {
	_, err := dl.Open(0, "libm.so.6", "libm.so")
	var de *dl.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlopen", de.Op)
	assert.Equal(t, []string{"libm.so.6", "libm.so"}, de.Tried)
	assert.Contains(t, err.Error(), "built without cgo")
}
