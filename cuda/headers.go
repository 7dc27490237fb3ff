package cuda

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"sync"
)

// embedded holds the device headers of this module, cuda/include.
//
//go:embed include
var embedded embed.FS

// Headers returns the device headers shipped with this module (the
// cuda/include directory) as a read-only file system rooted at that
// directory: "doca_gpunetio_device.h", "device/doca_gpunetio_dev_verbs_qp.cuh",
// "common/doca_gpunetio_verbs_def.h", ... They are compiled into every
// program that imports this package, so a program that compiles kernels with
// Compile needs no include path and no copy of the headers on disk. Write
// them out (for example with os.CopyFS) to compile with nvcc instead.
func Headers() fs.FS {
	sub, err := fs.Sub(embedded, "include")
	if err != nil {
		// "include" is a valid path; fs.Sub fails only on invalid ones.
		panic("cuda: embedded headers: " + err.Error())
	}
	return sub
}

// HeaderNames returns the path of every embedded header relative to the
// include directory, sorted, for example "device/doca_gpunetio_dev_verbs_qp.cuh".
func HeaderNames() []string {
	t := headerTable()
	return append([]string(nil), t.paths...)
}

// headers is the embedded headers and the names NVRTC finds them by.
type headers struct {
	// paths are the header paths relative to the include directory.
	paths []string
	// names[i] is an include name of contents[i].
	names, contents []string
}

// headerTable reads the embedded headers once (see newHeaderTable).
var headerTable = sync.OnceValue(func() *headers {
	t, err := newHeaderTable(Headers())
	if err != nil {
		// The embedded tree is part of the binary; reading it cannot fail.
		panic("cuda: embedded headers: " + err.Error())
	}
	return t
})

// newHeaderTable reads every file of fsys and gives each the include names
// that the include styles of cuda/README.md use, because NVRTC matches an
// #include against in-memory headers by its literal name (it resolves
// nothing relative to the including header):
//
//   - its path under include/ ("device/doca_gpunetio_dev_verbs_qp.cuh"),
//     for sources built against -Iinclude and for the umbrella header;
//   - its base name ("doca_gpunetio_dev_verbs_qp.cuh"), for sources built
//     against -Iinclude/device and friends, and for headers that include a
//     neighbour in their own directory;
//   - "../" and its path ("../common/doca_gpunetio_verbs_dev.h"), for
//     headers that include a file of a sibling directory.
//
// A base name shared by two headers would be ambiguous and is left out
// (TestHeaderTable checks that the embedded headers have none).
func newHeaderTable(fsys fs.FS) (*headers, error) {
	t := &headers{}
	data := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		t.paths = append(t.paths, p)
		data[p] = string(b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(t.paths)
	bases := map[string]int{}
	for _, p := range t.paths {
		bases[path.Base(p)]++
	}
	seen := map[string]bool{}
	add := func(name, content string) {
		if !seen[name] {
			seen[name] = true
			t.names = append(t.names, name)
			t.contents = append(t.contents, content)
		}
	}
	for _, p := range t.paths {
		add(p, data[p])
		if b := path.Base(p); bases[b] == 1 {
			add(b, data[p])
		}
		add("../"+p, data[p])
	}
	return t, nil
}
