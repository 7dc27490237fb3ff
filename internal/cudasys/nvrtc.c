// Run-time binding of NVRTC: a table of its entry points (filled from Go
// through internal/dl) and one forwarding function per call.

#include <stddef.h>

#include "nvrtc.h"

static gn_result (*p_nvrtcVersion)(int *, int *);
static const char *(*p_nvrtcGetErrorString)(gn_result);
static gn_result (*p_nvrtcCreateProgram)(gn_program *, const char *, const char *, int,
                                         const char *const *, const char *const *);
static gn_result (*p_nvrtcDestroyProgram)(gn_program *);
static gn_result (*p_nvrtcAddNameExpression)(gn_program, const char *);
static gn_result (*p_nvrtcCompileProgram)(gn_program, int, const char *const *);
static gn_result (*p_nvrtcGetProgramLogSize)(gn_program, size_t *);
static gn_result (*p_nvrtcGetProgramLog)(gn_program, char *);
static gn_result (*p_nvrtcGetPTXSize)(gn_program, size_t *);
static gn_result (*p_nvrtcGetPTX)(gn_program, char *);
static gn_result (*p_nvrtcGetLoweredName)(gn_program, const char *, const char **);
static gn_result (*p_nvrtcGetCUBINSize)(gn_program, size_t *);
static gn_result (*p_nvrtcGetCUBIN)(gn_program, char *);
static gn_result (*p_nvrtcGetNumSupportedArchs)(int *);
static gn_result (*p_nvrtcGetSupportedArchs)(int *);

struct gn_sym {
	const char *name;
	void **slot;
	int required;
};

#define SYM(var, name) {name, (void **)&var, 1}
#define OPT(var, name) {name, (void **)&var, 0}

static const struct gn_sym gn_syms[] = {
	SYM(p_nvrtcVersion, "nvrtcVersion"),
	SYM(p_nvrtcGetErrorString, "nvrtcGetErrorString"),
	SYM(p_nvrtcCreateProgram, "nvrtcCreateProgram"),
	SYM(p_nvrtcDestroyProgram, "nvrtcDestroyProgram"),
	SYM(p_nvrtcAddNameExpression, "nvrtcAddNameExpression"),
	SYM(p_nvrtcCompileProgram, "nvrtcCompileProgram"),
	SYM(p_nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"),
	SYM(p_nvrtcGetProgramLog, "nvrtcGetProgramLog"),
	SYM(p_nvrtcGetPTXSize, "nvrtcGetPTXSize"),
	SYM(p_nvrtcGetPTX, "nvrtcGetPTX"),
	SYM(p_nvrtcGetLoweredName, "nvrtcGetLoweredName"),
	// CUDA 11.1 and later.
	OPT(p_nvrtcGetCUBINSize, "nvrtcGetCUBINSize"),
	OPT(p_nvrtcGetCUBIN, "nvrtcGetCUBIN"),
	// CUDA 11.2 and later.
	OPT(p_nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"),
	OPT(p_nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"),
};

// The table as Go's loader (load.go) walks it, as in shim.c.
int gn_sym_count(void) { return (int)(sizeof(gn_syms) / sizeof(gn_syms[0])); }
const char *gn_sym_name(int i) { return gn_syms[i].name; }
int gn_sym_required(int i) { return gn_syms[i].required; }
void gn_bind(int i, void *fn) { *gn_syms[i].slot = fn; }

int gn_has_cubin(void) { return p_nvrtcGetCUBINSize != NULL && p_nvrtcGetCUBIN != NULL; }
int gn_has_archs(void) {
	return p_nvrtcGetNumSupportedArchs != NULL && p_nvrtcGetSupportedArchs != NULL;
}

// NEED fails the forwarding function with GN_NOT_LOADED when its entry
// point is not resolved, so none calls through a NULL pointer.
#define NEED(fn)                   \
	do {                           \
		if ((fn) == NULL) {        \
			return GN_NOT_LOADED;  \
		}                          \
	} while (0)

gn_result gn_version(int *major, int *minor) {
	NEED(p_nvrtcVersion);
	return p_nvrtcVersion(major, minor);
}
const char *gn_error_string(gn_result r) {
	return p_nvrtcGetErrorString != NULL ? p_nvrtcGetErrorString(r) : NULL;
}
gn_result gn_num_supported_archs(int *n) {
	NEED(p_nvrtcGetNumSupportedArchs);
	return p_nvrtcGetNumSupportedArchs(n);
}
gn_result gn_supported_archs(int *archs) {
	NEED(p_nvrtcGetSupportedArchs);
	return p_nvrtcGetSupportedArchs(archs);
}

gn_result gn_create_program(gn_program *p, const char *src, const char *name, int nheaders,
                            const char *const *headers, const char *const *include_names) {
	NEED(p_nvrtcCreateProgram);
	return p_nvrtcCreateProgram(p, src, name, nheaders, headers, include_names);
}
gn_result gn_destroy_program(gn_program *p) {
	NEED(p_nvrtcDestroyProgram);
	return p_nvrtcDestroyProgram(p);
}
gn_result gn_add_name_expression(gn_program p, const char *expr) {
	NEED(p_nvrtcAddNameExpression);
	return p_nvrtcAddNameExpression(p, expr);
}
gn_result gn_compile_program(gn_program p, int nopts, const char *const *opts) {
	NEED(p_nvrtcCompileProgram);
	return p_nvrtcCompileProgram(p, nopts, opts);
}
gn_result gn_get_log_size(gn_program p, size_t *n) {
	NEED(p_nvrtcGetProgramLogSize);
	return p_nvrtcGetProgramLogSize(p, n);
}
gn_result gn_get_log(gn_program p, char *log) {
	NEED(p_nvrtcGetProgramLog);
	return p_nvrtcGetProgramLog(p, log);
}
gn_result gn_get_ptx_size(gn_program p, size_t *n) {
	NEED(p_nvrtcGetPTXSize);
	return p_nvrtcGetPTXSize(p, n);
}
gn_result gn_get_ptx(gn_program p, char *ptx) {
	NEED(p_nvrtcGetPTX);
	return p_nvrtcGetPTX(p, ptx);
}
gn_result gn_get_cubin_size(gn_program p, size_t *n) {
	NEED(p_nvrtcGetCUBINSize);
	return p_nvrtcGetCUBINSize(p, n);
}
gn_result gn_get_cubin(gn_program p, char *cubin) {
	NEED(p_nvrtcGetCUBIN);
	return p_nvrtcGetCUBIN(p, cubin);
}
gn_result gn_get_lowered_name(gn_program p, const char *expr, const char **lowered) {
	NEED(p_nvrtcGetLoweredName);
	return p_nvrtcGetLoweredName(p, expr, lowered);
}
