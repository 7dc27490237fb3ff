package doctortest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzExtract runs the archive parser on arbitrary text. It must not panic,
// and nothing may appear outside the target directory; "OUT" in the input
// stands for a directory beside it, so links can point there.
func FuzzExtract(f *testing.F) {
	f.Add([]byte("dir sys/class/iommu\nfile proc/cmdline\nro iommu=pt\n.\n"))
	f.Add([]byte("hex sys/config 16\n0000: de ad\n000e: be ef\n.\n"))
	f.Add([]byte("link sys/bus/pci/devices/0000:00:01.0 -> ../../../devices/pci0000:00/0000:00:01.0\n"))
	f.Add([]byte("link a -> OUT\nfile a/x\nhi\n.\n"))
	f.Add([]byte("link a -> OUT/x\nhex a 4\n.\n"))
	f.Add([]byte("# comment\n\nfile ../x\n.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("hex")) > 4 {
			t.Skip("bounded: each hex entry may write 1 MiB")
		}
		base := t.TempDir()
		dir, out := filepath.Join(base, "tree"), filepath.Join(base, "out")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		arch := filepath.Join(base, "f.tree")
		if err := os.WriteFile(arch, bytes.ReplaceAll(data, []byte("OUT"), []byte(out)), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = Extract(arch, dir)
		ents, err := os.ReadDir(base)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 3 {
			t.Fatalf("entries beside the tree: %v", ents)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Fatalf("written outside the tree: %v", ents)
		}
	})
}
