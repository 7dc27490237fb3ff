package verbs

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/docasdk"
)

// Dev is the device object of DOCA GPUNetIO 3.0 (doca_dev_t), opened from a
// protection domain: the one object both implementations understand, on
// which UMEMs, UARs, CQs and QPs are made (Dev.NewUMem, Dev.NewUAR,
// Dev.NewCQ, Dev.NewQP) and through which their PD is known. In open mode
// it holds the PD and its Context; in SDK mode it is the SDK's device
// (doca_rdma_bridge_open_dev_from_pd), into which it imports the PD's verbs
// context once, for every CQ, QP and AH made on it.
//
// Lifetime: the Dev references its PD (which cannot close before it), and
// every UMEM, UAR, CQ and QP made on it references the Dev, so Close fails
// with ErrInUse, naming them, until they are closed. Teardown in the DOCA
// examples' order: QPs, CQs, UMEMs and UARs, then the Dev, then the PD,
// then the Context.
type Dev struct {
	node
	pd   *PD
	ctx  *Context
	mode Mode

	sdk     docasdk.Dev
	standIn *hostBuf // the stand-in struct ibv_pd of an emulated device (tests)

	importMu sync.Mutex
	vctx     docasdk.VerbsContext // imported on first use
	vpd      docasdk.VerbsPD
}

// OpenDev opens the device object of pd (doca_verbs_dev_open). In SDK mode
// the PD must be an rdma-core PD (a real mlx5 device): an emulated device
// has none, and is refused with ErrNotSupported. The PD must outlive the
// Dev (it is referenced until Dev.Close).
func OpenDev(pd *PD) (*Dev, error) {
	const op = "doca_verbs_dev_open"
	if pd == nil {
		logPrint(logErr, "Failed to create dev: parameter verbs_pd=NULL")
		return nil, newErr(op, ErrInvalidValue, "nil PD")
	}
	if err := pd.check(op); err != nil {
		return nil, err
	}
	m := currentMode()
	logUse(docasdk.ObjDev, m)
	d := &Dev{pd: pd, ctx: pd.ctx, mode: m}
	if err := pd.acquire(op, "PD", &d.node); err != nil {
		return nil, err
	}
	if m == ModeSDK {
		raw, err := d.sdkPD(op)
		if err == nil {
			d.sdk, err = docasdk.DevOpenFromPD(raw)
			if err != nil {
				err = sdkErr(op, true, err, "open the SDK device of PD %d on %s", pd.PDN(), pd.ctx.Name())
			}
		}
		if err != nil {
			if d.standIn != nil {
				d.standIn.free()
			}
			pd.release(&d.node)
			return nil, err
		}
		d.init("Dev", fmt.Sprintf("Dev (SDK) of PD %d on %s", pd.PDN(), pd.ctx.Name()))
		return d, nil
	}
	d.init("Dev", fmt.Sprintf("Dev of PD %d on %s", pd.PDN(), pd.ctx.Name()))
	logCreated(docasdk.ObjDev, unsafe.Pointer(d))
	return d, nil
}

// sdkPD returns the struct ibv_pd * to open the SDK device from: the PD's
// own, or, on an emulated device with stand-in PDs enabled (this module's
// tests, against the stand-in SDK), a page whose first word, the context
// pointer, points into the page.
func (d *Dev) sdkPD(op string) (unsafe.Pointer, error) {
	if raw := d.pd.Raw(); raw != 0 {
		return ptr(raw), nil
	}
	if !docasdk.StandInPDs() {
		return nil, newErr(op, ErrNotSupported, "%s is an emulated device, which has no rdma-core PD: SDK mode (DOCA_SDK_LIB_PATH) drives real mlx5 devices only", d.ctx.Name())
	}
	b, err := allocHost(op, hostPage)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint64(b.b, uint64(b.addr()+hostPage/2))
	d.standIn = b
	return ptr(b.addr()), nil
}

// check refuses a nil, zero-value or closed Dev.
func (d *Dev) check(op string) error {
	if d == nil {
		return newErr(op, ErrInvalidValue, "nil Dev")
	}
	return d.use(op, "Dev")
}

// context imports the Dev's verbs context into the SDK, once (SDK mode).
func (d *Dev) context(op string) (docasdk.VerbsContext, error) {
	d.importMu.Lock()
	defer d.importMu.Unlock()
	if d.vctx.IsZero() {
		v, err := d.sdk.ImportContext()
		if err != nil {
			return docasdk.VerbsContext{}, sdkErr(op, true, err, "import the verbs context of %s into the SDK", d.ctx.Name())
		}
		d.vctx = v
	}
	return d.vctx, nil
}

// verbsPD imports the Dev's PD into the SDK, once (SDK mode).
func (d *Dev) verbsPD(op string) (docasdk.VerbsPD, error) {
	d.importMu.Lock()
	defer d.importMu.Unlock()
	if d.vpd.IsZero() {
		v, err := d.sdk.ImportPD()
		if err != nil {
			return docasdk.VerbsPD{}, sdkErr(op, true, err, "import PD %d into the SDK", d.pd.PDN())
		}
		d.vpd = v
	}
	return d.vpd, nil
}

// PD returns the protection domain the Dev was opened from.
func (d *Dev) PD() *PD {
	if d == nil {
		return nil
	}
	return d.pd
}

// Context returns the device the Dev's PD belongs to.
func (d *Dev) Context() *Context {
	if d == nil {
		return nil
	}
	return d.ctx
}

// Mode is the implementation behind the Dev and everything made on it.
func (d *Dev) Mode() Mode {
	if d == nil {
		return ModeOpen
	}
	return d.mode
}

// Hold takes a reference that keeps the Dev open (Close fails with ErrInUse
// naming holder) until Hold.Release; ErrBadState if it is closed.
func (d *Dev) Hold(holder string) (*Hold, error) {
	const op = "Dev.Hold"
	if d == nil {
		return nil, newErr(op, ErrInvalidValue, "nil Dev")
	}
	return d.hold(op, "Dev", holder)
}

// Close closes the device object (doca_verbs_dev_close). It fails with
// ErrInUse while UMEMs, UARs, CQs or QPs made on it are open. In SDK mode
// the SDK device is closed (doca_dev_close); if the SDK fails, the error
// (ErrUnexpected) is returned and the Dev is closed anyway, as DOCA releases
// its handle in every case. A second Close returns nil.
func (d *Dev) Close() error {
	const op = "doca_verbs_dev_close"
	if d == nil {
		logPrint(logInfo, "Failed to destroy net_dev: parameter net_dev is NULL")
		return newErr(op, ErrInvalidValue, "nil Dev")
	}
	done, err := d.beginClose(op, "Dev")
	if done || err != nil {
		return err
	}
	if d.mode == ModeSDK {
		// The SDK offers no release of the imports: they live as long as
		// its device.
		if cerr := d.sdk.Close(); cerr != nil {
			err = sdkErr(op, false, cerr, "close the SDK device of PD %d", d.pd.PDN())
		}
		if d.standIn != nil {
			d.standIn.free()
			d.standIn = nil
		}
	}
	d.pd.release(&d.node)
	d.endClose(nil)
	return err
}
