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

type entry struct {
	Kind  string
	What  string
	Stack string
}

// The switch reads its variable once, records only while on, and the
// report hints at how to turn it on only while it is off.
func TestRecorder(t *testing.T) {
	t.Setenv("CALLSTACK_TEST_STACKS", "0")
	r := NewRecorder("CALLSTACK_TEST_STACKS", "pkg.RecordStacks(true)")
	assert.False(t, r.On(), `"0" leaves it off`)
	assert.Nil(t, r.Here(0))
	t.Setenv("CALLSTACK_TEST_STACKS", "1")
	r = NewRecorder("CALLSTACK_TEST_STACKS", "pkg.RecordStacks(true)")
	assert.True(t, r.On())
	s := func() Stack { return r.Here(0) }().String()
	assert.Contains(t, strings.SplitN(s, "\n", 2)[0], ".TestRecorder.func", "skip 0 starts at the caller of Here")

	objs := Sorted[entry]([]Object{{Kind: "QP", What: "b"}, {Kind: "CQ", What: "a"}}, nil)
	assert.Equal(t, []entry{{Kind: "CQ", What: "a"}, {Kind: "QP", What: "b"}}, objs)
	assert.Equal(t, "pkg: 2 open:\n  CQ: a\n  QP: b", LeakReport(r, "pkg: %d open:", objs))
	r.Set(false)
	assert.Equal(t, "pkg: 1 open:\n  CQ: a\n  (set CALLSTACK_TEST_STACKS=1 or call pkg.RecordStacks(true) to see where each was created)",
		LeakReport(r, "pkg: %d open:", objs[:1]))
	assert.Equal(t, "", LeakReport(r, "pkg: %d open:", []entry(nil)))
}

// A leak fails a passing run and leaves a failing run's status; empty
// reports print nothing.
func TestFailOnLeaks(t *testing.T) {
	var b strings.Builder
	assert.Equal(t, 0, FailOnLeaks(0, &b, "", ""))
	assert.Equal(t, 3, FailOnLeaks(3, &b))
	assert.Empty(t, b.String())
	assert.Equal(t, 1, FailOnLeaks(0, &b, "", "a: 1 open", "b: 2 open"))
	assert.Equal(t, 2, FailOnLeaks(2, &b, "c"))
	assert.Equal(t, "a: 1 open\nb: 2 open\nc\n", b.String())
}
