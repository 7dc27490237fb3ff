// shim.h: the run-time bound rdma-core entry points of package devx.
//
// rdma-core's headers are used for types and constants only. Nothing here is
// linked against libibverbs or libmlx5: lib.go opens both libraries through
// internal/dl, resolves every entry point listed in gdk_syms (shim.c) and
// stores the addresses into struct gdk_fns with gdk_table_set; the gdk_*
// functions below call through that table. Go calls only gdk_*.

#ifndef GDAKI_DEVX_SHIM_H
#define GDAKI_DEVX_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

// rdma-core v45 added the dedicated non-cached UAR type; older headers lack
// the macro, and older libmlx5 refuses the flag with EOPNOTSUPP.
#ifndef MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED
#define MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED (1U << 31)
#endif

// Symbol indices. GDK_SYM_COUNT is the table size.
enum gdk_sym {
	GDK_IBV_GET_DEVICE_LIST,
	GDK_IBV_FREE_DEVICE_LIST,
	GDK_IBV_GET_DEVICE_NAME,
	GDK_IBV_GET_DEVICE_GUID,
	GDK_IBV_CLOSE_DEVICE,
	GDK_IBV_QUERY_DEVICE,
	GDK_IBV_QUERY_PORT,
	GDK_IBV_QUERY_GID_EX,
	GDK_IBV_ALLOC_PD,
	GDK_IBV_DEALLOC_PD,
	GDK_IBV_REG_MR_IOVA2,
	GDK_IBV_REG_DMABUF_MR,
	GDK_IBV_DEREG_MR,
	GDK_MLX5DV_IS_SUPPORTED,
	GDK_MLX5DV_OPEN_DEVICE,
	GDK_MLX5DV_INIT_OBJ,
	GDK_MLX5DV_DEVX_OBJ_CREATE,
	GDK_MLX5DV_DEVX_OBJ_QUERY,
	GDK_MLX5DV_DEVX_OBJ_MODIFY,
	GDK_MLX5DV_DEVX_OBJ_DESTROY,
	GDK_MLX5DV_DEVX_GENERAL_CMD,
	GDK_MLX5DV_DEVX_UMEM_REG,
	GDK_MLX5DV_DEVX_UMEM_REG_EX,
	GDK_MLX5DV_DEVX_UMEM_DEREG,
	GDK_MLX5DV_DEVX_ALLOC_UAR,
	GDK_MLX5DV_DEVX_FREE_UAR,
	GDK_MLX5DV_DEVX_QUERY_EQN,
	GDK_MLX5DV_DEVX_CREATE_EVENT_CHANNEL,
	GDK_MLX5DV_DEVX_DESTROY_EVENT_CHANNEL,
	GDK_MLX5DV_DEVX_SUBSCRIBE_DEVX_EVENT,
	GDK_MLX5DV_DEVX_GET_EVENT,
	GDK_IBV_IMPORT_DEVICE,
	GDK_IBV_IMPORT_PD,
	GDK_IBV_UNIMPORT_PD,
	GDK_SYM_COUNT
};

// Which library a symbol comes from.
enum gdk_lib { GDK_LIB_IBVERBS = 0, GDK_LIB_MLX5 = 1 };

// One entry point: its name, version node, library, whether it may be
// missing, and the first rdma-core release that exports it (0: all do).
struct gdk_sym_info {
	const char *name;
	const char *version;
	int lib;
	int optional;
	int since;
};

// The function table: the resolved entry points (NULL for a missing
// optional one).
struct gdk_fns {
	void *fn[GDK_SYM_COUNT];
};

// The table the gdk_* calls use. Filled once from Go (guarded by a
// sync.Once); read-only afterwards.
extern struct gdk_fns gdk_table;

// gdk_sym_info_at describes symbol i (0 <= i < GDK_SYM_COUNT).
const struct gdk_sym_info *gdk_sym_info_at(int i);

// gdk_table_set stores entry point i of table t (Go's loader fills tables
// through it).
void gdk_table_set(struct gdk_fns *t, int i, void *fn);

// gdk_has reports whether entry point i was resolved in gdk_table.
int gdk_has(int i);

// gdk_set_fn replaces entry point i of gdk_table and returns the old one
// (tests use it to simulate an old rdma-core that lacks an optional symbol).
void *gdk_set_fn(int i, void *fn);

// Calls through gdk_table. Each has the prototype and return convention of
// the rdma-core call it is named after; addresses are passed as uintptr_t.
struct ibv_device **gdk_get_device_list(int *num);
void gdk_free_device_list(struct ibv_device **list);
struct ibv_device *gdk_device_at(struct ibv_device **list, int i);
const char *gdk_get_device_name(struct ibv_device *dev);
uint64_t gdk_get_device_guid(struct ibv_device *dev); // host order
const char *gdk_device_ibdev_path(struct ibv_device *dev);
int gdk_is_supported(struct ibv_device *dev);
struct ibv_context *gdk_open_devx(struct ibv_device *dev);
int gdk_close_device(struct ibv_context *ctx);
int gdk_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int gdk_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
int gdk_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		     struct ibv_gid_entry *entry);
struct ibv_pd *gdk_alloc_pd(struct ibv_context *ctx);
int gdk_dealloc_pd(struct ibv_pd *pd);
int gdk_pd_pdn(struct ibv_pd *pd, uint32_t *pdn);
struct ibv_mr *gdk_reg_mr_iova2(struct ibv_pd *pd, uintptr_t addr, size_t length,
				uint64_t iova, unsigned int access);
struct ibv_mr *gdk_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access);
int gdk_dereg_mr(struct ibv_mr *mr);
struct mlx5dv_devx_obj *gdk_obj_create(struct ibv_context *ctx, const void *in, size_t inlen,
				       void *out, size_t outlen);
int gdk_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
		  size_t outlen);
int gdk_obj_modify(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
		   size_t outlen);
int gdk_obj_destroy(struct mlx5dv_devx_obj *obj);
int gdk_general_cmd(struct ibv_context *ctx, const void *in, size_t inlen, void *out,
		    size_t outlen);
struct mlx5dv_devx_umem *gdk_umem_reg(struct ibv_context *ctx, uintptr_t addr, size_t size,
				      uint32_t access);
struct mlx5dv_devx_umem *gdk_umem_reg_dmabuf(struct ibv_context *ctx, int fd, uint64_t offset,
					     size_t size, uint32_t access, uint64_t pgsz_bitmap);
int gdk_umem_dereg(struct mlx5dv_devx_umem *umem);
struct mlx5dv_devx_uar *gdk_alloc_uar(struct ibv_context *ctx, uint32_t flags);
void gdk_free_uar(struct mlx5dv_devx_uar *uar);
int gdk_query_eqn(struct ibv_context *ctx, uint32_t vector, uint32_t *eqn);
struct mlx5dv_devx_event_channel *gdk_create_event_channel(struct ibv_context *ctx);
void gdk_destroy_event_channel(struct mlx5dv_devx_event_channel *ch);
int gdk_event_channel_fd(struct mlx5dv_devx_event_channel *ch);
int gdk_subscribe_devx_event(struct mlx5dv_devx_event_channel *ch, struct mlx5dv_devx_obj *obj,
			     uint16_t events_sz, uint16_t *events_num, uint64_t cookie);
// gdk_get_event reads one event: its cookie and the EQE (eqe_len bytes);
// it returns the bytes of EQE read, or -1 with errno.
ssize_t gdk_get_event(struct mlx5dv_devx_event_channel *ch, uint64_t *cookie, void *eqe,
		      size_t eqe_len);

// Interop with rdma-core objects a program made itself.
struct ibv_device *gdk_context_device(struct ibv_context *ctx); // ctx->device
int gdk_context_cmd_fd(struct ibv_context *ctx);                // ctx->cmd_fd
struct ibv_context *gdk_pd_context(struct ibv_pd *pd);          // pd->context
uint32_t gdk_pd_handle(struct ibv_pd *pd);                      // pd->handle
struct ibv_context *gdk_import_device(int cmd_fd);
struct ibv_pd *gdk_import_pd(struct ibv_context *ctx, uint32_t handle);
void gdk_unimport_pd(struct ibv_pd *pd);

#endif
