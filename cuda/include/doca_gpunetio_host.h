/*
 * Umbrella header for the GPUNetIO host side. The C host API of the reference (doca_gpunetio.h,
 * doca_verbs.h, mlx5 PRM headers) is replaced by the Go library; this umbrella provides the
 * parts shared with device code and kernel launch wrappers.
 */
#ifndef DOCA_GPUNETIO_HOST_H
#define DOCA_GPUNETIO_HOST_H

#include "doca_gpunetio_config.h"
#include "common/doca_gpunetio_verbs_def.h"
#include "common/doca_gpunetio_verbs_dev.h"
#include "host/doca_error.h"

#endif /* DOCA_GPUNETIO_HOST_H */
