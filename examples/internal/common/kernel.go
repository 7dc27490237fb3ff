package common

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KernelDirEnv names a directory searched first for kernel images.
const KernelDirEnv = "GDAKI_KERNEL_DIR"

// ErrNoKernel matches a kernel image that cannot be found.
var ErrNoKernel = errors.New("kernel image not found (run make kernels, or pass -k)")

// FindKernel returns the path of the kernel image: explicit when non-empty
// (it must exist), otherwise name in $GDAKI_KERNEL_DIR, then build/kernels/name
// in the working directory or any parent of it, then the same from the
// executable's directory upwards.
func FindKernel(explicit, name string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("kernel image -k %s: %w", explicit, err)
		}
		return explicit, nil
	}
	var tried []string
	try := func(p string) bool {
		tried = append(tried, p)
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	if d := os.Getenv(KernelDirEnv); d != "" {
		if p := filepath.Join(d, name); try(p) {
			return p, nil
		}
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for {
			if p := filepath.Join(dir, "build", "kernels", name); try(p) {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("%s: %w; looked in %d places, first %s: %w", name, ErrNoKernel, len(tried), first(tried), fs.ErrNotExist)
}

func first(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return s[0]
}
