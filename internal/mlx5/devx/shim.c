//go:build cgo

// shim.c: run-time binding of libibverbs and libmlx5 (see shim.h).

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "shim.h"

struct gdk_fns gdk_table;

// The entry points, in enum gdk_sym order. Version nodes and first releases
// are those of rdma-core's symbol maps (libibverbs.map.in, libmlx5.map).
// A release of 0 means "every rdma-core release": the IBVERBS_1.1 names
// predate rdma-core itself.
// Versioned lookup matters where a library exports several implementations
// of one name: the IBVERBS_1.0 compat entry points and mlx5dv_init_obj's
// MLX5_1.0 one take different structures than the headers describe.
static const struct gdk_sym_info gdk_syms[GDK_SYM_COUNT] = {
	[GDK_IBV_GET_DEVICE_LIST] = {"ibv_get_device_list", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_FREE_DEVICE_LIST] = {"ibv_free_device_list", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_GET_DEVICE_NAME] = {"ibv_get_device_name", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_GET_DEVICE_GUID] = {"ibv_get_device_guid", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_CLOSE_DEVICE] = {"ibv_close_device", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_QUERY_DEVICE] = {"ibv_query_device", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_QUERY_PORT] = {"ibv_query_port", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_QUERY_GID_EX] = {"_ibv_query_gid_ex", "IBVERBS_1.11", GDK_LIB_IBVERBS, 1, 32},
	[GDK_IBV_ALLOC_PD] = {"ibv_alloc_pd", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_DEALLOC_PD] = {"ibv_dealloc_pd", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_IBV_REG_MR_IOVA2] = {"ibv_reg_mr_iova2", "IBVERBS_1.8", GDK_LIB_IBVERBS, 0, 28},
	[GDK_IBV_REG_DMABUF_MR] = {"ibv_reg_dmabuf_mr", "IBVERBS_1.12", GDK_LIB_IBVERBS, 1, 34},
	[GDK_IBV_DEREG_MR] = {"ibv_dereg_mr", "IBVERBS_1.1", GDK_LIB_IBVERBS, 0, 0},
	[GDK_MLX5DV_IS_SUPPORTED] = {"mlx5dv_is_supported", "MLX5_1.8", GDK_LIB_MLX5, 0, 22},
	[GDK_MLX5DV_OPEN_DEVICE] = {"mlx5dv_open_device", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_INIT_OBJ] = {"mlx5dv_init_obj", "MLX5_1.2", GDK_LIB_MLX5, 0, 15},
	[GDK_MLX5DV_DEVX_OBJ_CREATE] = {"mlx5dv_devx_obj_create", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_OBJ_QUERY] = {"mlx5dv_devx_obj_query", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_OBJ_MODIFY] = {"mlx5dv_devx_obj_modify", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_OBJ_DESTROY] = {"mlx5dv_devx_obj_destroy", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_GENERAL_CMD] = {"mlx5dv_devx_general_cmd", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_UMEM_REG] = {"mlx5dv_devx_umem_reg", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_UMEM_REG_EX] = {"mlx5dv_devx_umem_reg_ex", "MLX5_1.19", GDK_LIB_MLX5, 1, 35},
	[GDK_MLX5DV_DEVX_UMEM_DEREG] = {"mlx5dv_devx_umem_dereg", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_ALLOC_UAR] = {"mlx5dv_devx_alloc_uar", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_FREE_UAR] = {"mlx5dv_devx_free_uar", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_QUERY_EQN] = {"mlx5dv_devx_query_eqn", "MLX5_1.7", GDK_LIB_MLX5, 0, 21},
	[GDK_MLX5DV_DEVX_CREATE_EVENT_CHANNEL] = {"mlx5dv_devx_create_event_channel", "MLX5_1.11", GDK_LIB_MLX5, 1, 26},
	[GDK_MLX5DV_DEVX_DESTROY_EVENT_CHANNEL] = {"mlx5dv_devx_destroy_event_channel", "MLX5_1.11", GDK_LIB_MLX5, 1, 26},
	[GDK_MLX5DV_DEVX_SUBSCRIBE_DEVX_EVENT] = {"mlx5dv_devx_subscribe_devx_event", "MLX5_1.11", GDK_LIB_MLX5, 1, 26},
	[GDK_MLX5DV_DEVX_GET_EVENT] = {"mlx5dv_devx_get_event", "MLX5_1.11", GDK_LIB_MLX5, 1, 26},
	[GDK_IBV_IMPORT_DEVICE] = {"ibv_import_device", "IBVERBS_1.10", GDK_LIB_IBVERBS, 1, 32},
	[GDK_IBV_IMPORT_PD] = {"ibv_import_pd", "IBVERBS_1.10", GDK_LIB_IBVERBS, 1, 32},
	[GDK_IBV_UNIMPORT_PD] = {"ibv_unimport_pd", "IBVERBS_1.10", GDK_LIB_IBVERBS, 1, 32},
};

const struct gdk_sym_info *gdk_sym_info_at(int i)
{
	if (i < 0 || i >= GDK_SYM_COUNT)
		return NULL;
	return &gdk_syms[i];
}

void gdk_table_set(struct gdk_fns *t, int i, void *fn)
{
	if (i >= 0 && i < GDK_SYM_COUNT)
		t->fn[i] = fn;
}

int gdk_has(int i)
{
	return i >= 0 && i < GDK_SYM_COUNT && gdk_table.fn[i] != NULL;
}

void *gdk_set_fn(int i, void *fn)
{
	if (i < 0 || i >= GDK_SYM_COUNT)
		return NULL;
	void *old = gdk_table.fn[i];
	gdk_table.fn[i] = fn;
	return old;
}

// Function pointer types of the entry points, from the prototypes in
// verbs.h / mlx5dv.h.
typedef struct ibv_device **(*get_device_list_fn)(int *);
typedef void (*free_device_list_fn)(struct ibv_device **);
typedef const char *(*get_device_name_fn)(struct ibv_device *);
typedef __be64 (*get_device_guid_fn)(struct ibv_device *);
typedef int (*close_device_fn)(struct ibv_context *);
typedef int (*query_device_fn)(struct ibv_context *, struct ibv_device_attr *);
typedef int (*query_port_compat_fn)(struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *);
typedef int (*query_gid_ex_fn)(struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *,
			       uint32_t, size_t);
typedef struct ibv_pd *(*alloc_pd_fn)(struct ibv_context *);
typedef int (*dealloc_pd_fn)(struct ibv_pd *);
typedef struct ibv_mr *(*reg_mr_iova2_fn)(struct ibv_pd *, void *, size_t, uint64_t, unsigned int);
typedef struct ibv_mr *(*reg_dmabuf_mr_fn)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
typedef int (*dereg_mr_fn)(struct ibv_mr *);
typedef bool (*is_supported_fn)(struct ibv_device *);
typedef struct ibv_context *(*open_device_fn)(struct ibv_device *, struct mlx5dv_context_attr *);
typedef int (*init_obj_fn)(struct mlx5dv_obj *, uint64_t);
typedef struct mlx5dv_devx_obj *(*obj_create_fn)(struct ibv_context *, const void *, size_t, void *,
						 size_t);
typedef int (*obj_cmd_fn)(struct mlx5dv_devx_obj *, const void *, size_t, void *, size_t);
typedef int (*obj_destroy_fn)(struct mlx5dv_devx_obj *);
typedef int (*general_cmd_fn)(struct ibv_context *, const void *, size_t, void *, size_t);
typedef struct mlx5dv_devx_umem *(*umem_reg_fn)(struct ibv_context *, void *, size_t, uint32_t);
typedef struct mlx5dv_devx_umem *(*umem_reg_ex_fn)(struct ibv_context *, struct mlx5dv_devx_umem_in *);
typedef int (*umem_dereg_fn)(struct mlx5dv_devx_umem *);
typedef struct mlx5dv_devx_uar *(*alloc_uar_fn)(struct ibv_context *, uint32_t);
typedef void (*free_uar_fn)(struct mlx5dv_devx_uar *);
typedef int (*query_eqn_fn)(struct ibv_context *, uint32_t, uint32_t *);
typedef struct mlx5dv_devx_event_channel *(*create_event_channel_fn)(
	struct ibv_context *, enum mlx5dv_devx_create_event_channel_flags);
typedef void (*destroy_event_channel_fn)(struct mlx5dv_devx_event_channel *);
typedef int (*subscribe_devx_event_fn)(struct mlx5dv_devx_event_channel *, struct mlx5dv_devx_obj *,
				       uint16_t, uint16_t[], uint64_t);
typedef ssize_t (*get_event_fn)(struct mlx5dv_devx_event_channel *,
				struct mlx5dv_devx_async_event_hdr *, size_t);
typedef struct ibv_context *(*import_device_fn)(int);
typedef struct ibv_pd *(*import_pd_fn)(struct ibv_context *, uint32_t);
typedef void (*unimport_pd_fn)(struct ibv_pd *);

#define GDK_FN(type, idx) ((type)gdk_table.fn[idx])

// A missing optional entry point fails its call with ENOTSUP; Go checks
// gdk_has first and reports which symbol is missing, so this is a backstop.
#define GDK_NEED(idx, fail)                  \
	do {                                 \
		if (gdk_table.fn[idx] == NULL) { \
			errno = ENOTSUP;     \
			return fail;         \
		}                            \
	} while (0)

struct ibv_device **gdk_get_device_list(int *num)
{
	GDK_NEED(GDK_IBV_GET_DEVICE_LIST, NULL);
	return GDK_FN(get_device_list_fn, GDK_IBV_GET_DEVICE_LIST)(num);
}

void gdk_free_device_list(struct ibv_device **list)
{
	if (list != NULL && gdk_table.fn[GDK_IBV_FREE_DEVICE_LIST] != NULL)
		GDK_FN(free_device_list_fn, GDK_IBV_FREE_DEVICE_LIST)(list);
}

struct ibv_device *gdk_device_at(struct ibv_device **list, int i)
{
	return list[i];
}

const char *gdk_get_device_name(struct ibv_device *dev)
{
	GDK_NEED(GDK_IBV_GET_DEVICE_NAME, NULL);
	return GDK_FN(get_device_name_fn, GDK_IBV_GET_DEVICE_NAME)(dev);
}

uint64_t gdk_get_device_guid(struct ibv_device *dev)
{
	GDK_NEED(GDK_IBV_GET_DEVICE_GUID, 0);
	return be64toh(GDK_FN(get_device_guid_fn, GDK_IBV_GET_DEVICE_GUID)(dev));
}

const char *gdk_device_ibdev_path(struct ibv_device *dev)
{
	return dev->ibdev_path;
}

int gdk_is_supported(struct ibv_device *dev)
{
	GDK_NEED(GDK_MLX5DV_IS_SUPPORTED, 0);
	return GDK_FN(is_supported_fn, GDK_MLX5DV_IS_SUPPORTED)(dev) ? 1 : 0;
}

struct ibv_context *gdk_open_devx(struct ibv_device *dev)
{
	struct mlx5dv_context_attr attr;

	GDK_NEED(GDK_MLX5DV_OPEN_DEVICE, NULL);
	memset(&attr, 0, sizeof(attr));
	attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
	return GDK_FN(open_device_fn, GDK_MLX5DV_OPEN_DEVICE)(dev, &attr);
}

int gdk_close_device(struct ibv_context *ctx)
{
	GDK_NEED(GDK_IBV_CLOSE_DEVICE, ENOTSUP);
	return GDK_FN(close_device_fn, GDK_IBV_CLOSE_DEVICE)(ctx);
}

int gdk_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	GDK_NEED(GDK_IBV_QUERY_DEVICE, ENOTSUP);
	return GDK_FN(query_device_fn, GDK_IBV_QUERY_DEVICE)(ctx, attr);
}

// ibv_query_port is a header macro: a provider with the extended query_port
// op fills the whole struct; otherwise the exported symbol fills the legacy
// prefix of it and the rest stays zero.
int gdk_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	if (vctx != NULL)
		return vctx->query_port(ctx, port, attr, sizeof(*attr));
	GDK_NEED(GDK_IBV_QUERY_PORT, ENOTSUP);
	memset(attr, 0, sizeof(*attr));
	return GDK_FN(query_port_compat_fn, GDK_IBV_QUERY_PORT)(
		ctx, port, (struct _compat_ibv_port_attr *)attr);
}

// ibv_query_gid_ex is a static inline over _ibv_query_gid_ex, which takes the
// size of the caller's entry structure.
int gdk_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		     struct ibv_gid_entry *entry)
{
	GDK_NEED(GDK_IBV_QUERY_GID_EX, ENOTSUP);
	return GDK_FN(query_gid_ex_fn, GDK_IBV_QUERY_GID_EX)(ctx, port, index, entry, 0,
							     sizeof(*entry));
}

struct ibv_pd *gdk_alloc_pd(struct ibv_context *ctx)
{
	GDK_NEED(GDK_IBV_ALLOC_PD, NULL);
	return GDK_FN(alloc_pd_fn, GDK_IBV_ALLOC_PD)(ctx);
}

int gdk_dealloc_pd(struct ibv_pd *pd)
{
	GDK_NEED(GDK_IBV_DEALLOC_PD, ENOTSUP);
	return GDK_FN(dealloc_pd_fn, GDK_IBV_DEALLOC_PD)(pd);
}

int gdk_pd_pdn(struct ibv_pd *pd, uint32_t *pdn)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_pd dv;
	int rc;

	GDK_NEED(GDK_MLX5DV_INIT_OBJ, ENOTSUP);
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.pd.in = pd;
	obj.pd.out = &dv;
	rc = GDK_FN(init_obj_fn, GDK_MLX5DV_INIT_OBJ)(&obj, MLX5DV_OBJ_PD);
	if (rc == 0)
		*pdn = dv.pdn;
	return rc;
}

struct ibv_mr *gdk_reg_mr_iova2(struct ibv_pd *pd, uintptr_t addr, size_t length, uint64_t iova,
				unsigned int access)
{
	GDK_NEED(GDK_IBV_REG_MR_IOVA2, NULL);
	return GDK_FN(reg_mr_iova2_fn, GDK_IBV_REG_MR_IOVA2)(pd, (void *)addr, length, iova,
							     access);
}

struct ibv_mr *gdk_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	GDK_NEED(GDK_IBV_REG_DMABUF_MR, NULL);
	return GDK_FN(reg_dmabuf_mr_fn, GDK_IBV_REG_DMABUF_MR)(pd, offset, length, iova, fd,
							       access);
}

int gdk_dereg_mr(struct ibv_mr *mr)
{
	GDK_NEED(GDK_IBV_DEREG_MR, ENOTSUP);
	return GDK_FN(dereg_mr_fn, GDK_IBV_DEREG_MR)(mr);
}

struct mlx5dv_devx_obj *gdk_obj_create(struct ibv_context *ctx, const void *in, size_t inlen,
				       void *out, size_t outlen)
{
	GDK_NEED(GDK_MLX5DV_DEVX_OBJ_CREATE, NULL);
	return GDK_FN(obj_create_fn, GDK_MLX5DV_DEVX_OBJ_CREATE)(ctx, in, inlen, out, outlen);
}

int gdk_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
		  size_t outlen)
{
	GDK_NEED(GDK_MLX5DV_DEVX_OBJ_QUERY, ENOTSUP);
	return GDK_FN(obj_cmd_fn, GDK_MLX5DV_DEVX_OBJ_QUERY)(obj, in, inlen, out, outlen);
}

int gdk_obj_modify(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
		   size_t outlen)
{
	GDK_NEED(GDK_MLX5DV_DEVX_OBJ_MODIFY, ENOTSUP);
	return GDK_FN(obj_cmd_fn, GDK_MLX5DV_DEVX_OBJ_MODIFY)(obj, in, inlen, out, outlen);
}

int gdk_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	GDK_NEED(GDK_MLX5DV_DEVX_OBJ_DESTROY, ENOTSUP);
	return GDK_FN(obj_destroy_fn, GDK_MLX5DV_DEVX_OBJ_DESTROY)(obj);
}

int gdk_general_cmd(struct ibv_context *ctx, const void *in, size_t inlen, void *out,
		    size_t outlen)
{
	GDK_NEED(GDK_MLX5DV_DEVX_GENERAL_CMD, ENOTSUP);
	return GDK_FN(general_cmd_fn, GDK_MLX5DV_DEVX_GENERAL_CMD)(ctx, in, inlen, out, outlen);
}

struct mlx5dv_devx_umem *gdk_umem_reg(struct ibv_context *ctx, uintptr_t addr, size_t size,
				      uint32_t access)
{
	GDK_NEED(GDK_MLX5DV_DEVX_UMEM_REG, NULL);
	return GDK_FN(umem_reg_fn, GDK_MLX5DV_DEVX_UMEM_REG)(ctx, (void *)addr, size, access);
}

// With MLX5DV_UMEM_MASK_DMABUF the addr field carries the offset inside the
// dma-buf, not a pointer.
struct mlx5dv_devx_umem *gdk_umem_reg_dmabuf(struct ibv_context *ctx, int fd, uint64_t offset,
					     size_t size, uint32_t access, uint64_t pgsz_bitmap)
{
	struct mlx5dv_devx_umem_in in;

	GDK_NEED(GDK_MLX5DV_DEVX_UMEM_REG_EX, NULL);
	memset(&in, 0, sizeof(in));
	in.addr = (void *)(uintptr_t)offset;
	in.size = size;
	in.access = access;
	in.pgsz_bitmap = pgsz_bitmap;
	in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
	in.dmabuf_fd = fd;
	return GDK_FN(umem_reg_ex_fn, GDK_MLX5DV_DEVX_UMEM_REG_EX)(ctx, &in);
}

int gdk_umem_dereg(struct mlx5dv_devx_umem *umem)
{
	GDK_NEED(GDK_MLX5DV_DEVX_UMEM_DEREG, ENOTSUP);
	return GDK_FN(umem_dereg_fn, GDK_MLX5DV_DEVX_UMEM_DEREG)(umem);
}

struct mlx5dv_devx_uar *gdk_alloc_uar(struct ibv_context *ctx, uint32_t flags)
{
	GDK_NEED(GDK_MLX5DV_DEVX_ALLOC_UAR, NULL);
	return GDK_FN(alloc_uar_fn, GDK_MLX5DV_DEVX_ALLOC_UAR)(ctx, flags);
}

void gdk_free_uar(struct mlx5dv_devx_uar *uar)
{
	if (gdk_table.fn[GDK_MLX5DV_DEVX_FREE_UAR] != NULL)
		GDK_FN(free_uar_fn, GDK_MLX5DV_DEVX_FREE_UAR)(uar);
}

int gdk_query_eqn(struct ibv_context *ctx, uint32_t vector, uint32_t *eqn)
{
	GDK_NEED(GDK_MLX5DV_DEVX_QUERY_EQN, ENOTSUP);
	return GDK_FN(query_eqn_fn, GDK_MLX5DV_DEVX_QUERY_EQN)(ctx, vector, eqn);
}

struct mlx5dv_devx_event_channel *gdk_create_event_channel(struct ibv_context *ctx)
{
	GDK_NEED(GDK_MLX5DV_DEVX_CREATE_EVENT_CHANNEL, NULL);
	return GDK_FN(create_event_channel_fn, GDK_MLX5DV_DEVX_CREATE_EVENT_CHANNEL)(ctx, 0);
}

void gdk_destroy_event_channel(struct mlx5dv_devx_event_channel *ch)
{
	if (gdk_table.fn[GDK_MLX5DV_DEVX_DESTROY_EVENT_CHANNEL] != NULL)
		GDK_FN(destroy_event_channel_fn, GDK_MLX5DV_DEVX_DESTROY_EVENT_CHANNEL)(ch);
}

int gdk_event_channel_fd(struct mlx5dv_devx_event_channel *ch)
{
	return ch->fd;
}

int gdk_subscribe_devx_event(struct mlx5dv_devx_event_channel *ch, struct mlx5dv_devx_obj *obj,
			     uint16_t events_sz, uint16_t *events_num, uint64_t cookie)
{
	GDK_NEED(GDK_MLX5DV_DEVX_SUBSCRIBE_DEVX_EVENT, ENOTSUP);
	return GDK_FN(subscribe_devx_event_fn, GDK_MLX5DV_DEVX_SUBSCRIBE_DEVX_EVENT)(
		ch, obj, events_sz, events_num, cookie);
}

ssize_t gdk_get_event(struct mlx5dv_devx_event_channel *ch, uint64_t *cookie, void *eqe,
		      size_t eqe_len)
{
	// The header (the cookie) and then the EQE, as the kernel writes them.
	uint64_t buf[1 + 64 / sizeof(uint64_t)];
	ssize_t n;

	GDK_NEED(GDK_MLX5DV_DEVX_GET_EVENT, -1);
	if (eqe_len > 64)
		eqe_len = 64;
	n = GDK_FN(get_event_fn, GDK_MLX5DV_DEVX_GET_EVENT)(
		ch, (struct mlx5dv_devx_async_event_hdr *)buf, sizeof(buf));
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(uint64_t)) {
		errno = EIO;
		return -1;
	}
	*cookie = buf[0];
	n -= sizeof(uint64_t);
	if ((size_t)n > eqe_len)
		n = eqe_len;
	memcpy(eqe, &buf[1], n);
	return n;
}

struct ibv_device *gdk_context_device(struct ibv_context *ctx)
{
	return ctx->device;
}

int gdk_context_cmd_fd(struct ibv_context *ctx)
{
	return ctx->cmd_fd;
}

struct ibv_context *gdk_pd_context(struct ibv_pd *pd)
{
	return pd->context;
}

uint32_t gdk_pd_handle(struct ibv_pd *pd)
{
	return pd->handle;
}

struct ibv_context *gdk_import_device(int cmd_fd)
{
	GDK_NEED(GDK_IBV_IMPORT_DEVICE, NULL);
	return GDK_FN(import_device_fn, GDK_IBV_IMPORT_DEVICE)(cmd_fd);
}

struct ibv_pd *gdk_import_pd(struct ibv_context *ctx, uint32_t handle)
{
	GDK_NEED(GDK_IBV_IMPORT_PD, NULL);
	return GDK_FN(import_pd_fn, GDK_IBV_IMPORT_PD)(ctx, handle);
}

void gdk_unimport_pd(struct ibv_pd *pd)
{
	if (gdk_table.fn[GDK_IBV_UNIMPORT_PD] != NULL)
		GDK_FN(unimport_pd_fn, GDK_IBV_UNIMPORT_PD)(pd);
}
