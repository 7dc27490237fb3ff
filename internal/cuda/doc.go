// Package cuda binds the CUDA driver API, loaded at run time from libcuda.so.1.
package cuda
