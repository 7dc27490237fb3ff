package doctor

import "fmt"

// gdrapiSymbols are the libgdrapi functions gpunetio's GDRCopy loader
// resolves; all of them must resolve for GDRCopy to be used.
var gdrapiSymbols = []string{
	"gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map", "gdr_unmap",
	"gdr_copy_from_mapping", "gdr_copy_to_mapping", "gdr_runtime_get_version", "gdr_driver_get_version",
}

const fixGDRCopy = "Optional (GPU_CPU memory and the SW-emulated no-DBR mode need it): install GDRCopy (gdrdrv module and libgdrapi.so.2), then modprobe gdrdrv."

func (r *runner) checkGDRCopy() {
	mod := "gdrdrv not loaded"
	modOK := r.fs.exists("/sys/module/gdrdrv")
	if modOK {
		v, _ := r.fs.readString("/sys/module/gdrdrv/version")
		mod = "gdrdrv " + orUnknown(v)
	}
	lib := "library not checked"
	libOK := false
	if r.env.Libs != nil {
		l, err := r.env.Libs.Probe("libgdrapi.so.2", gdrapiSymbols...)
		switch {
		case err != nil:
			lib = err.Error()
		default:
			var missing []string
			for _, s := range gdrapiSymbols {
				if !l.Symbols[s] {
					missing = append(missing, s)
				}
			}
			if len(missing) > 0 {
				lib = fmt.Sprintf("%s lacks %v", l.Path, missing)
			} else {
				lib, libOK = l.Path, true
			}
		}
	}
	v := mod + "; " + lib
	if modOK && libOK {
		r.add(Result{Name: "gdrcopy", Verdict: Pass, Value: v})
		return
	}
	r.add(Result{Name: "gdrcopy", Verdict: Warn, Value: v + " (optional)", Fix: fixGDRCopy})
}
