//go:build tools

// Package internal pins module dependencies used by packages still being
// written (go-nvml for the doctor's GPU facts).
package internal

import _ "github.com/NVIDIA/go-nvml/pkg/nvml"
