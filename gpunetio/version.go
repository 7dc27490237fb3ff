package gpunetio

// Version numbers are major<<16 | minor<<8 | patch, as DOCA encodes them.
const (
	VersionMajor = 3
	VersionMinor = 0
	VersionPatch = 0
	// Version is the API level this library implements (DOCA GPUNetIO
	// 3.0.0, 0x030000).
	Version = VersionMajor<<16 | VersionMinor<<8 | VersionPatch
	// DeviceCodeVersion / HostCodeVersion are what kernels and host code built
	// against these headers report (DOCA_GPUNETIO_DEVICE_CODE_VERSION and
	// DOCA_GPUNETIO_HOST_CODE_VERSION of cuda/include).
	DeviceCodeVersion = Version
	HostCodeVersion   = Version
	// MinCompatDeviceCodeVersion is the oldest device code accepted (2.0.0):
	// DOCA 3.0 changed no device struct, so kernels built against 2.x
	// headers pass too.
	MinCompatDeviceCodeVersion = 2 << 16
	// MinCompatHostCodeVersion is the oldest host code accepted. DOCA sets it
	// to 0.2.0 (most likely meaning 2.0.0); we keep the literal value so the
	// same host versions are accepted.
	MinCompatHostCodeVersion = 2 << 8
)

// MakeVersion encodes a version number.
func MakeVersion(major, minor, patch uint8) uint32 {
	return uint32(major)<<16 | uint32(minor)<<8 | uint32(patch)
}

// LibraryVersion is doca_gpu_verbs_get_library_version: 0x030000.
func LibraryVersion() uint32 { return Version }

// CheckDeviceCodeCompatibility accepts device code built for versions
// MinCompatDeviceCodeVersion..Version, 0x020000..0x030000
// (doca_gpu_verbs_check_device_code_compatibility).
func CheckDeviceCodeCompatibility(v uint32) error {
	if v < MinCompatDeviceCodeVersion || v > Version {
		return newErr("doca_gpu_verbs_check_device_code_compatibility", ErrNotSupported,
			"device code version 0x%06x outside 0x%06x..0x%06x", v, MinCompatDeviceCodeVersion, Version)
	}
	return nil
}

// CheckHostCodeCompatibility accepts host code built for versions
// MinCompatHostCodeVersion..Version, 0x000200..0x030000
// (doca_gpu_verbs_check_host_code_compatibility).
func CheckHostCodeCompatibility(v uint32) error {
	if v < MinCompatHostCodeVersion || v > Version {
		return newErr("doca_gpu_verbs_check_host_code_compatibility", ErrNotSupported,
			"host code version 0x%06x outside 0x%06x..0x%06x", v, MinCompatHostCodeVersion, Version)
	}
	return nil
}
