package gpunetio

// DOCAFunctions maps every function of DOCA GPUNetIO 3.0's doca_gpunetio.h
// and doca_gpunetio_high_level.h to its Go counterpart: a package-level
// function, a Type or a Type.Method. It carries the 3.0 names (3.0 renamed
// doca_gpu_dmabuf_fd to doca_gpu_get_dmabuf_fd; GPU.DmabufFD remains as a
// deprecated alias of GPU.GetDmabufFD). The functions of doca_verbs.h are in
// verbs.DOCAFunctions. A test checks that the list is exactly the 3.0 API
// and that every Go name exists.
var DOCAFunctions = []struct{ C, Go string }{
	{"doca_gpu_create", "NewGPU"},
	{"doca_gpu_destroy", "GPU.Close"},
	{"doca_gpu_mem_alloc", "GPU.MemAlloc"},
	{"doca_gpu_mem_free", "GPU.MemFree"},
	{"doca_gpu_get_dmabuf_fd", "GPU.GetDmabufFD"},
	{"doca_gpu_verbs_can_gpu_register_uar", "GPU.CanGPURegisterUAR"},
	{"doca_gpu_verbs_export_uar", "GPU.ExportUAR"},
	{"doca_gpu_verbs_unexport_uar", "GPU.UnexportUAR"},
	{"doca_gpu_verbs_export_qp", "GPU.ExportQP"},
	{"doca_gpu_verbs_unexport_qp", "QP.Close"},
	{"doca_gpu_verbs_get_qp_dev", "QP.DeviceQP"},
	{"doca_gpu_verbs_cpu_proxy_progress", "QP.ProgressProxy"},
	{"doca_gpu_verbs_create_service", "NewService"},
	{"doca_gpu_verbs_service_monitor_qp", "Service.Monitor"},
	{"doca_gpu_verbs_destroy_service", "Service.Close"},
	{"doca_gpu_verbs_query_last_error", "QP.LastError"},
	{"doca_gpu_verbs_export_multi_qps_dev", "GPU.ExportQPs"},
	{"doca_gpu_verbs_unexport_multi_qps_dev", "DevQPArray.Close"},
	{"doca_gpu_verbs_reset_tracking_and_memory", "QP.ResetTrackingAndMemory"},
	{"doca_gpu_verbs_get_library_version", "LibraryVersion"},
	{"doca_gpu_verbs_check_device_code_compatibility", "CheckDeviceCodeCompatibility"},
	{"doca_gpu_verbs_check_host_code_compatibility", "CheckHostCodeCompatibility"},
	{"doca_gpu_verbs_create_qp_hl", "NewQPHL"},
	{"doca_gpu_verbs_destroy_qp_hl", "QPHL.Close"},
	{"doca_gpu_verbs_create_qp_group_hl", "NewQPGroupHL"},
	{"doca_gpu_verbs_destroy_qp_group_hl", "QPGroupHL.Close"},
	{"doca_gpu_verbs_qp_flat_list_create_hl", "NewQPFlatList"},
	{"doca_gpu_verbs_qp_flat_list_destroy_hl", "FlatList.Close"},
}
