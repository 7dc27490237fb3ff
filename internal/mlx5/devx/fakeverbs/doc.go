// Package fakeverbs holds C test doubles of the libibverbs and libmlx5 entry
// points that package devx binds at run time. devx's tests put them into its
// function table in place of rdma-core's, to check without an RDMA device how
// the C shims marshal arguments and results. Only tests import it; it is
// empty in a build without cgo.
//
// The fakes share one global record: tests that use them must not run in
// parallel.
package fakeverbs
