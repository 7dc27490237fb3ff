//go:build !amd64 && !arm64

package wire

// sysMemfdCreate is unknown here: no shared-memory links, TCP only.
const sysMemfdCreate = -1
