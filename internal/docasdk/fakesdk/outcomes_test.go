package fakesdk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a child writes reads back; every difference is named, in order;
// a missing or corrupt file is an error.
func TestOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same-api.json")
	open := map[string]string{"a": "ok 1", "b": "error DOCA_ERROR_IN_USE", "c": "ok"}
	require.NoError(t, WriteOutcomes(path, open))
	diffs, err := CompareOutcomes(path, open)
	require.NoError(t, err)
	assert.Empty(t, diffs)

	require.NoError(t, WriteOutcomes(path, map[string]string{"a": "ok 1", "b": "error DOCA_ERROR_DRIVER", "d": "ok"}))
	diffs, err = CompareOutcomes(path, open)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`b: open mode "error DOCA_ERROR_IN_USE", SDK mode "error DOCA_ERROR_DRIVER"`,
		`c: open mode "ok", not run in SDK mode`,
		`d: SDK mode "ok", not run in open mode`,
	}, diffs)

	_, err = CompareOutcomes(filepath.Join(t.TempDir(), "none.json"), open)
	assert.ErrorContains(t, err, "the SDK-mode outcomes")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = CompareOutcomes(path, open)
	assert.ErrorContains(t, err, path)
}

// ForTest builds the complete stand-in under the test's directory.
func TestForTest(t *testing.T) {
	s, root := ForTest(t)
	assert.DirExists(t, root)
	assert.DirExists(t, s.Full())
	assert.True(t, strings.HasPrefix(s.Full(), root), "%s is under %s", s.Full(), root)
}
