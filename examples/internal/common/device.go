package common

import (
	"errors"

	"github.com/gdaki/gpunetio/verbs"
)

// OpenDevice opens the RDMA device named by name (a name or its prefix, as
// -d takes it), or the first device of the list when name is empty.
func OpenDevice(name string) (*verbs.Context, error) {
	if name != "" {
		return verbs.OpenDevicePrefix(name)
	}
	ds, err := verbs.Devices()
	if err != nil {
		return nil, err
	}
	if len(ds) == 0 {
		return nil, errors.New("no RDMA device")
	}
	return verbs.OpenDevice(ds[0].Name)
}
