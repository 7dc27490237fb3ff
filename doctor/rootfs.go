package doctor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// maxSysfsFile bounds what is read from one sysfs or procfs file; PCI config
// space is at most 4096 bytes and the text files are far smaller.
const maxSysfsFile = 1 << 16

// maxLinkHops bounds symbolic link resolution (the kernel's own limit is 40).
const maxLinkHops = 40

// ErrLinkLoop is matched by a resolution error that followed too many links.
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// rootFS reads absolute paths ("/sys/...") below a root directory, and
// resolves symbolic links without leaving it: an absolute link target is
// taken relative to the root, and ".." stops at the root.
type rootFS struct {
	root string
}

func newRootFS(root string) rootFS {
	if root == "" {
		root = "/"
	}
	return rootFS{root: filepath.Clean(root)}
}

// host maps an absolute in-root path to the path on this machine.
func (r rootFS) host(p string) string {
	return filepath.Join(r.root, filepath.FromSlash(path.Clean("/"+p)))
}

// readFile reads a whole (small) file.
func (r rootFS) readFile(p string) ([]byte, error) {
	f, err := os.Open(r.host(p))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPathError(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSysfsFile))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPathError(err))
	}
	return b, nil
}

// readString reads a text file and trims surrounding white space.
func (r rootFS) readString(p string) (string, error) {
	b, err := r.readFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// exists reports whether p exists (following links, inside the root).
func (r rootFS) exists(p string) bool {
	rp, err := r.resolve(p)
	if err != nil {
		return false
	}
	_, err = os.Stat(r.host(rp))
	return err == nil
}

// list returns the sorted entry names of a directory; a missing directory
// is an empty list.
func (r rootFS) list(p string) ([]string, error) {
	rp, err := r.resolve(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	ents, err := os.ReadDir(r.host(rp))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", p, unwrapPathError(err))
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// resolve follows every symbolic link in p, component by component, and
// returns the canonical absolute in-root path.
func (r rootFS) resolve(p string) (string, error) {
	pending := splitPath(p)
	cur := "/"
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := os.Lstat(r.host(next))
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", p, unwrapPathError(err))
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", fmt.Errorf("resolve %s: %w", p, ErrLinkLoop)
		}
		target, err := os.Readlink(r.host(next))
		if err != nil {
			return "", fmt.Errorf("resolve %s: readlink %s: %w", p, next, unwrapPathError(err))
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		pending = append(splitPath(target), pending...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// unwrapPathError drops the *os.PathError wrapper, whose path is the host
// path (with the test root in it), keeping the errno for errors.Is.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		var en syscall.Errno
		if errors.As(pe.Err, &en) {
			return en
		}
		return pe.Err
	}
	return err
}
