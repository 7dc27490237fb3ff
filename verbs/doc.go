// Package verbs is the DOCA Verbs host API in idiomatic Go: RDMA devices,
// protection domains, memory regions, UMEMs, UARs, CQs and RC/UC QPs driven by
// PRM commands over DevX, on real mlx5 devices and on the emulated ones.
package verbs
