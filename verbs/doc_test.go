package verbs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// TestDocTransitionTable checks the transition table of the package
// documentation against the rules Modify enforces.
func TestDocTransitionTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "//\ttransition ") {
			start = i
			break
		}
	}
	require.GreaterOrEqual(t, start, 0, "doc.go has no transition table")
	head := strings.TrimPrefix(lines[start], "//\t")
	reqCol, allowCol := strings.Index(head, "required"), strings.Index(head, "also allowed")
	require.True(t, reqCol > 0 && allowCol > reqCol)

	type row struct{ required, allowed []string }
	rows := map[string]*row{}
	var order []string
	var cur *row
	cell := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" && f != "-" {
				out = append(out, f)
			}
		}
		return out
	}
	for _, l := range lines[start+1:] {
		if !strings.HasPrefix(l, "//\t") {
			break
		}
		l = strings.TrimPrefix(l, "//\t")
		for len(l) < allowCol {
			l += " "
		}
		if name := strings.TrimSpace(l[:reqCol]); name != "" {
			cur = &row{}
			rows[name] = cur
			order = append(order, name)
		}
		require.NotNil(t, cur)
		cur.required = append(cur.required, cell(l[reqCol:allowCol])...)
		cur.allowed = append(cur.allowed, cell(l[allowCol:])...)
	}
	names := func(m QPAttrMask) []string {
		if m == 0 {
			return nil
		}
		return strings.Split(m.String(), "|")
	}
	n := 0
	for _, op := range mlx5.Transitions() {
		pt, _ := mlx5.TransitionFor(op)
		from, err := qpStateFromPRM("test", pt.From[0])
		if err != nil {
			continue // SQER -> RTS: verbs has no SQER state
		}
		to, err := qpStateFromPRM("test", pt.To)
		require.NoError(t, err)
		tr := findTransition(from, to)
		require.NotNil(t, tr, "%v -> %v", from, to)
		key := from.String() + " -> " + to.String()
		if len(pt.From) > 1 {
			key = "any -> " + to.String()
		}
		n++
		r, ok := rows[key]
		if !assert.True(t, ok, "the documentation lacks %s", key) {
			continue
		}
		assert.ElementsMatch(t, names(tr.required), r.required, "%s required", key)
		assert.ElementsMatch(t, names(tr.allowed&^stateMask), r.allowed, "%s also allowed", key)
	}
	assert.Len(t, order, n)
}
