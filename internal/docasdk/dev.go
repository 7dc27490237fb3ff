package docasdk

import "unsafe"

// DevOpenFromPD opens the SDK device of an rdma-core protection domain
// (ibvPD is a struct ibv_pd *, which must outlive the Dev):
// doca_rdma_bridge_open_dev_from_pd.
func DevOpenFromPD(ibvPD unsafe.Pointer) (Dev, error) {
	p, err := create(symDevOpenFromPD, func(out *unsafe.Pointer) int32 {
		return tPOut(symDevOpenFromPD, ibvPD, out)
	}, arg{"pd", ibvPD})
	return Dev{p}, err
}

// Close closes the device (doca_dev_close) and clears d.
func (d *Dev) Close() error {
	if d == nil {
		return refused(symDevClose, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symDevClose, "dev", &d.dev)
}

// PD returns the rdma-core struct ibv_pd * the device was opened from:
// doca_rdma_bridge_get_dev_pd.
func (d Dev) PD() (unsafe.Pointer, error) {
	if err := begin(symDevGetPD, arg{"dev", d.dev}); err != nil {
		return nil, err
	}
	var pd unsafe.Pointer
	if err := status(symDevGetPD, tPOut(symDevGetPD, d.dev, &pd)); err != nil {
		return nil, err
	}
	if pd == nil {
		return nil, refused(symDevGetPD, CodeUnexpected, ErrNoObject)
	}
	return pd, nil
}

// ImportContext imports the device's verbs context into the SDK, as the
// reference does before creating a CQ, QP or AH attribute: the PD from PD,
// then doca_verbs_bridge_verbs_context_import(pd->context, 0). The reference
// imports again for every object and never releases the import; import once
// per Dev instead.
func (d Dev) ImportContext() (VerbsContext, error) {
	pd, err := d.PD()
	if err != nil {
		return VerbsContext{}, err
	}
	return ImportVerbsContext(pdContext(pd), 0)
}

// ImportPD imports the device's rdma-core PD into the SDK, as the reference
// does for doca_verbs_qp_init_attr_set_pd: the PD from PD, then
// doca_verbs_bridge_verbs_pd_import.
func (d Dev) ImportPD() (VerbsPD, error) {
	pd, err := d.PD()
	if err != nil {
		return VerbsPD{}, err
	}
	return ImportVerbsPD(pd)
}

// ImportVerbsContext imports an rdma-core struct ibv_context * into the
// SDK: doca_verbs_bridge_verbs_context_import.
func ImportVerbsContext(ibvContext unsafe.Pointer, flags uint32) (VerbsContext, error) {
	s := symVerbsContextImport
	if err := begin(s, arg{"context", ibvContext}); err != nil {
		return VerbsContext{}, err
	}
	var out unsafe.Pointer
	if err := status(s, tContextImport(s, ibvContext, flags, &out)); err != nil {
		return VerbsContext{}, err
	}
	if out == nil {
		return VerbsContext{}, refused(s, CodeUnexpected, ErrNoObject)
	}
	return VerbsContext{out}, nil
}

// ImportVerbsPD imports an rdma-core struct ibv_pd * into the SDK:
// doca_verbs_bridge_verbs_pd_import.
func ImportVerbsPD(ibvPD unsafe.Pointer) (VerbsPD, error) {
	s := symVerbsPDImport
	if err := begin(s, arg{"pd", ibvPD}); err != nil {
		return VerbsPD{}, err
	}
	var out unsafe.Pointer
	if err := status(s, tPOut(s, ibvPD, &out)); err != nil {
		return VerbsPD{}, err
	}
	if out == nil {
		return VerbsPD{}, refused(s, CodeUnexpected, ErrNoObject)
	}
	return VerbsPD{out}, nil
}
