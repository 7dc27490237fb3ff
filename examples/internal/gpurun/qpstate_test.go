package gpurun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// QPState on an Env without a QP (Open failed early) is an error, not a
// crash: the timeout path calls it on whatever Env it has.
func TestQPStateWithoutQP(t *testing.T) {
	var nilEnv *Env
	for _, e := range []*Env{nilEnv, {}} {
		_, err := e.QPState(time.Second)
		assert.ErrorContains(t, err, "QP state: no QP")
	}
}
