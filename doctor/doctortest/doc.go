// Package doctortest builds fake machines for tests of package doctor and of
// programs built on it: a sysfs / procfs tree extracted from a text archive
// into a temporary directory, and fakes of the probes (NVML, dlopen, CUDA,
// doorbell mapping) read from a facts.json file inside the same archive
// (see Facts). Scenario does both and returns the doctor.Env; the archives
// under the doctor package's testdata are examples of the format.
//
// Why an archive and not the tree itself under testdata: sysfs names contain
// ':' (0000:8a:00.0) and the tree needs symbolic links; a Go module zip
// rejects the former and drops the latter, so a module containing such a tree
// could not be published. The archive is plain text, one scenario per file.
//
// # Archive format
//
// Blank lines and lines starting with '#' between entries are ignored. Paths
// are relative to the tree root and may not contain "..".
//
//	dir  PATH                  an empty directory
//	link PATH -> TARGET        a symbolic link (TARGET as written)
//	file PATH                  a text file: the following lines, up to a
//	...                        line holding a single ".", each ending in \n
//	.
//	hex  PATH SIZE             a binary file of SIZE zero bytes, patched by
//	OFF: xx xx ...             the following lines (hex offset, hex bytes)
//	.                          up to a line holding a single "."
package doctortest
