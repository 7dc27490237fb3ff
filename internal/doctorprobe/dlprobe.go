package doctorprobe

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/gdaki/gpunetio/internal/dl"
)

// Library loads soname with dlopen(RTLD_NOW | RTLD_LOCAL), reports for each
// of symbols whether dlsym resolves it (found[i] for symbols[i]), returns
// the file the loader opened (symbolic links resolved when they can be) and
// unloads the library again. A library that cannot be loaded gives an error
// holding dlerror's text, which always names soname; no other error occurs.
func Library(soname string, symbols []string) (path string, found []bool, err error) {
	lib, err := dl.Open(dl.Now|dl.Local, soname)
	if err != nil {
		var de *dl.Error
		msg := err.Error()
		if errors.As(err, &de) {
			msg = de.Msg
		}
		if !strings.Contains(msg, soname) {
			msg = soname + ": " + msg
		}
		return "", nil, errors.New(msg)
	}
	defer lib.Close()
	found = make([]bool, len(symbols))
	for i, s := range symbols {
		_, lerr := lib.Lookup(s)
		found[i] = lerr == nil
	}
	// A library without a link-map name still loaded: the path stays empty.
	path, _ = lib.Path()
	if canon, err := filepath.EvalSymlinks(path); err == nil {
		path = canon
	}
	return path, found, nil
}
