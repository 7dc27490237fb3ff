package common

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFindKernel(t *testing.T) {
	root := t.TempDir()
	kdir := filepath.Join(root, "build", "kernels")
	require.NoError(t, os.MkdirAll(kdir, 0o755))
	img := filepath.Join(kdir, "put_bw_kernel.fatbin")
	require.NoError(t, os.WriteFile(img, []byte("x"), 0o644))
	deep := filepath.Join(root, "examples", "put_bw")
	require.NoError(t, os.MkdirAll(deep, 0o755))

	wd, err := os.Getwd()
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.Chdir(wd) })
	t.Setenv(KernelDirEnv, "")

	require.NoError(t, os.Chdir(deep))
	got, err := FindKernel("", "put_bw_kernel.fatbin")
	require.NoError(t, err)
	same, err := filepath.EvalSymlinks(got)
	require.NoError(t, err)
	want, err := filepath.EvalSymlinks(img)
	require.NoError(t, err)
	assert.Equal(t, want, same)

	_, err = FindKernel("", "nope.fatbin")
	assert.ErrorIs(t, err, ErrNoKernel)
	assert.ErrorIs(t, err, os.ErrNotExist)

	got, err = FindKernel(img, "ignored")
	require.NoError(t, err)
	assert.Equal(t, img, got)
	_, err = FindKernel(filepath.Join(root, "missing.fatbin"), "x")
	assert.ErrorIs(t, err, os.ErrNotExist)

	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "w.fatbin"), []byte("y"), 0o644))
	t.Setenv(KernelDirEnv, other)
	got, err = FindKernel("", "w.fatbin")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(other, "w.fatbin"), got)
}
