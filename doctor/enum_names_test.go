package doctor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The names Verdict prints (the generated String from enum_names.txt), which
// are also its JSON text; a value outside the four prints as Verdict(n),
// negative ones included.
func TestVerdictString(t *testing.T) {
	assert.Equal(t, "PASS", Pass.String())
	assert.Equal(t, "WARN", Warn.String())
	assert.Equal(t, "FAIL", Fail.String())
	assert.Equal(t, "SKIP", Skip.String())
	assert.Equal(t, "Verdict(4)", Verdict(4).String())
	assert.Equal(t, "Verdict(-1)", Verdict(-1).String())
	_, err := Verdict(-1).MarshalText()
	assert.EqualError(t, err, "marshal verdict: unknown value -1")
	b, err := Fail.MarshalText()
	assert.NoError(t, err)
	assert.Equal(t, "FAIL", string(b))
}
