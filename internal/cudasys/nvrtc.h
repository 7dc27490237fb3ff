// Declarations for the run-time loaded NVRTC library. No NVRTC header is
// included: nvrtcResult is a C int and nvrtcProgram an opaque pointer.
#ifndef GPUNETIO_NVRTC_SHIM_H
#define GPUNETIO_NVRTC_SHIM_H

#include <stddef.h>

typedef int gn_result;
typedef void *gn_program;

// GN_NOT_LOADED is the result of a forwarding function whose NVRTC entry
// point is not resolved; every nvrtcResult is far below it.
#define GN_NOT_LOADED (4 << 20)

// The entry-point table, for Go's loader (as in shim.h).
int gn_sym_count(void);
const char *gn_sym_name(int i);
int gn_sym_required(int i);
void gn_bind(int i, void *fn);
int gn_has_cubin(void);
int gn_has_archs(void);

gn_result gn_version(int *major, int *minor);
const char *gn_error_string(gn_result r);
gn_result gn_num_supported_archs(int *n);
gn_result gn_supported_archs(int *archs);

gn_result gn_create_program(gn_program *p, const char *src, const char *name, int nheaders,
                            const char *const *headers, const char *const *include_names);
gn_result gn_destroy_program(gn_program *p);
gn_result gn_add_name_expression(gn_program p, const char *expr);
gn_result gn_compile_program(gn_program p, int nopts, const char *const *opts);
gn_result gn_get_log_size(gn_program p, size_t *n);
gn_result gn_get_log(gn_program p, char *log);
gn_result gn_get_ptx_size(gn_program p, size_t *n);
gn_result gn_get_ptx(gn_program p, char *ptx);
gn_result gn_get_cubin_size(gn_program p, size_t *n);
gn_result gn_get_cubin(gn_program p, char *cubin);
gn_result gn_get_lowered_name(gn_program p, const char *expr, const char **lowered);

#endif
