package doctortest

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tree extracts the archive at path into a new temporary directory and
// returns that directory. The test fails on any archive error.
func Tree(t testing.TB, archive string) string {
	t.Helper()
	dir := t.TempDir()
	if err := Extract(archive, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Extract writes the tree described by the archive file into dir. It
// refuses (with an error naming the archive line) any path that leaves dir
// or goes through a symbolic link, so an archive writes nothing outside dir.
func Extract(archive, dir string) error {
	data, err := os.ReadFile(archive)
	if err != nil {
		return fmt.Errorf("extract tree: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("extract tree %s:%d: %s", archive, line, fmt.Sprintf(format, a...))
	}
	target := func(p string) (string, error) {
		if p == "" || filepath.IsAbs(p) || strings.Contains("/"+p+"/", "/../") {
			return "", fail("bad path %q", p)
		}
		// A link made by an earlier entry may point anywhere: never create
		// or write anything through one.
		rel := ""
		for _, c := range strings.Split(path.Clean(p), "/") {
			rel = path.Join(rel, c)
			fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return "", fail("%v", err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return "", fail("path %q goes through the symbolic link %q", p, rel)
			}
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", fail("%v", err)
		}
		return full, nil
	}
	for {
		l, ok := next()
		if !ok {
			break
		}
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch kind {
		case "dir":
			full, err := target(rest)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(full, 0o755); err != nil {
				return fail("%v", err)
			}
		case "link":
			p, to, ok := strings.Cut(rest, " -> ")
			if !ok {
				return fail("link without ->")
			}
			full, err := target(strings.TrimSpace(p))
			if err != nil {
				return err
			}
			if err := os.Symlink(strings.TrimSpace(to), full); err != nil {
				return fail("%v", err)
			}
		case "file":
			full, err := target(rest)
			if err != nil {
				return err
			}
			var b strings.Builder
			for {
				c, ok := next()
				if !ok {
					return fail("file %s not terminated by '.'", rest)
				}
				if c == "." {
					break
				}
				b.WriteString(c)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(full, []byte(b.String()), 0o644); err != nil {
				return fail("%v", err)
			}
		case "hex":
			p, sz, _ := strings.Cut(rest, " ")
			size, err := strconv.Atoi(strings.TrimSpace(sz))
			if err != nil || size < 0 || size > 1<<20 {
				return fail("bad hex size %q", sz)
			}
			full, err := target(p)
			if err != nil {
				return err
			}
			buf := make([]byte, size)
			for {
				c, ok := next()
				if !ok {
					return fail("hex %s not terminated by '.'", p)
				}
				if c == "." {
					break
				}
				offS, bytesS, ok := strings.Cut(c, ":")
				if !ok {
					return fail("hex line without offset")
				}
				off, err := strconv.ParseUint(strings.TrimSpace(offS), 16, 32)
				if err != nil {
					return fail("bad offset %q", offS)
				}
				bs, err := hex.DecodeString(strings.Join(strings.Fields(bytesS), ""))
				if err != nil {
					return fail("bad hex bytes: %v", err)
				}
				if int(off)+len(bs) > size {
					return fail("hex bytes past the end of a %d-byte file", size)
				}
				copy(buf[off:], bs)
			}
			if err := os.WriteFile(full, buf, 0o644); err != nil {
				return fail("%v", err)
			}
		default:
			return fail("unknown entry %q", kind)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("extract tree %s: %w", archive, err)
	}
	return nil
}
