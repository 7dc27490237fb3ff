package callstack

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func makeHere() Stack { return Here(0) }

func TestHereStartsAtItsCaller(t *testing.T) {
	s := makeHere().String()
	first := strings.SplitN(strings.TrimPrefix(s, "\t"), "\n", 2)[0]
	assert.True(t, strings.HasSuffix(first, ".makeHere"), "first frame %q", first)
	assert.Contains(t, s, "callstack_test.go:")
	up := func() Stack { return Here(1) }()
	first = strings.SplitN(strings.TrimPrefix(up.String(), "\t"), "\n", 2)[0]
	assert.True(t, strings.HasSuffix(first, ".TestHereStartsAtItsCaller"), "skip 1 starts at the caller's caller: %q", first)
	assert.Equal(t, "", Stack(nil).String())
}

func TestReport(t *testing.T) {
	assert.Equal(t, "", Report("x: 0", nil, "hint"))
	objs := []Object{{Kind: "QP", What: "b"}, {Kind: "Context", What: "z", Stack: "\tf\n\t\tf.go:1\n"}, {Kind: "QP", What: "a"}}
	Sort(objs, nil)
	assert.Equal(t, "pkg: 3 open:\n  Context: z, created at:\n  \tf\n  \t\tf.go:1\n  QP: a\n  QP: b\n  (hint)", Report("pkg: 3 open:", objs, "(hint)"))
	Sort(objs, func(k string) int {
		if k == "QP" {
			return 0
		}
		return 1
	})
	assert.Equal(t, []string{"QP", "QP", "Context"}, []string{objs[0].Kind, objs[1].Kind, objs[2].Kind})
}
