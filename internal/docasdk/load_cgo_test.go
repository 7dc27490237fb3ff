//go:build cgo

package docasdk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// systemLoader hands the decision the dynamic loader's own text and integer
// handles that stop resolving once closed.
func TestSystemLoader(t *testing.T) {
	var ld systemLoader
	h, why := ld.open("/nowhere/libdoca_common.so", true)
	assert.Zero(t, h)
	assert.Equal(t, "/nowhere/libdoca_common.so: cannot open shared object file: No such file or directory", why)

	h, why = ld.open("libm.so.6", false)
	require.NotZero(t, h, why)
	fn, why := ld.sym(h, "cos")
	assert.NotZero(t, fn, why)
	fn, why = ld.sym(h, "doca_gdaki_absent")
	assert.Zero(t, fn)
	assert.Contains(t, why, "undefined symbol: doca_gdaki_absent")

	ld.close(h)
	ld.close(h) // a second close is harmless
	fn, why = ld.sym(h, "cos")
	assert.Zero(t, fn, "a closed handle resolves nothing")
	assert.Equal(t, "library is closed", why)
}
