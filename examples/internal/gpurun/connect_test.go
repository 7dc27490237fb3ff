package gpurun

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gdaki/gpunetio/examples/internal/common"
	"github.com/gdaki/gpunetio/gpunetio"
	"github.com/gdaki/gpunetio/verbs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenQPExchangeConnect runs the examples' host flow without a GPU: a
// high-level QP on emu0 and one on emu1 (a host-memory GPU from
// gpunetio.NewHostGPU stands in for the GPU), the endpoint records sent over
// a loopback TCP connection in the reference's byte format, and the one-call
// RC connect, as put_bw's server and client do.
func TestOpenQPExchangeConnect(t *testing.T) {
	for _, h := range []gpunetio.NICHandler{gpunetio.NICHandlerAuto, gpunetio.NICHandlerCPUProxy, gpunetio.NICHandlerGPUSMDB} {
		t.Run(h.String(), func(t *testing.T) {
			g := gpunetio.NewHostGPU()
			srv, cli := &Env{GPU: g}, &Env{GPU: g}
			defer func() {
				require.NoError(t, cli.Close())
				require.NoError(t, srv.Close())
				require.NoError(t, g.Close())
				assert.Empty(t, verbs.LeakReport())
			}()
			require.NoError(t, srv.openQP(testProg, common.Config{Device: "emu0"}, QPOptions{Handler: gpunetio.NICHandlerAuto}, io.Discard))
			require.NoError(t, cli.openQP(testProg, common.Config{Device: "emu1"}, QPOptions{Handler: h}, io.Discard))
			assert.NotZero(t, cli.DevQP)
			assert.Equal(t, verbs.EndpointDOCAMTU, cli.Local.MTU)

			// The server offers two host buffers, as its 16 in put_bw.
			regions := make([]verbs.Region, 2)
			for i := range regions {
				b, err := srv.HostBuffer(4096, RemoteWritable)
				require.NoError(t, err)
				regions[i] = b.MR.Region()
			}

			l, err := common.Listen(0)
			require.NoError(t, err)
			defer l.Close()
			type res struct {
				ep  verbs.Endpoint
				err error
			}
			ch := make(chan res, 1)
			go func() {
				c, err := common.Accept(context.Background(), l, 5*time.Second)
				if err != nil {
					ch <- res{err: err}
					return
				}
				defer c.Close()
				ep, err := common.Exchange(c, srv.Endpoint(regions), 0, 5*time.Second)
				ch <- res{ep, err}
			}()
			c, err := net.Dial("tcp4", l.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			fromSrv, err := common.Exchange(c, cli.Endpoint(nil), len(regions), 5*time.Second)
			require.NoError(t, err)
			r := <-ch
			require.NoError(t, r.err)

			assert.Equal(t, srv.QP.QP().QPN(), fromSrv.QPN)
			assert.Equal(t, srv.Local.GID, fromSrv.GID)
			require.Len(t, fromSrv.Regions, 2)
			for i := range regions {
				assert.Equal(t, regions[i].Addr, fromSrv.Regions[i].Addr)
				assert.Equal(t, regions[i].RKey, fromSrv.Regions[i].RKey)
			}
			assert.Equal(t, cli.QP.QP().QPN(), r.ep.QPN)
			assert.Empty(t, r.ep.Regions)

			require.NoError(t, srv.Connect(r.ep))
			require.NoError(t, cli.Connect(fromSrv))
			for _, e := range []*Env{srv, cli} {
				attr, _, err := e.QP.QP().Query()
				require.NoError(t, err)
				assert.Equal(t, verbs.QPStateRTS, attr.CurrentState)
				assert.Equal(t, verbs.MTU4096, attr.PathMTU)
			}
			err = cli.Connect(fromSrv)
			assert.ErrorIs(t, err, verbs.ErrBadState, "already connected")
			assert.ErrorContains(t, err, "connect QP")

			started, err := cli.StartProxy(io.Discard)
			require.NoError(t, err)
			assert.Equal(t, cli.QP.GPUQP().CPUAssisted(), started)
			assert.Equal(t, h == gpunetio.NICHandlerCPUProxy, started, "only CPU_PROXY needs the CPU on the emulated NIC")
		})
	}
}

// A device name that matches nothing fails and leaves nothing open.
func TestOpenQPBadDevice(t *testing.T) {
	g := gpunetio.NewHostGPU()
	e := &Env{GPU: g}
	err := e.openQP(testProg, common.Config{Device: "nosuchdevice"}, QPOptions{}, io.Discard)
	require.Error(t, err)
	assert.ErrorIs(t, err, verbs.ErrNotFound)
	assert.ErrorContains(t, err, `open RDMA device "nosuchdevice"`)
	require.NoError(t, e.Close())
	require.NoError(t, g.Close())

	g = gpunetio.NewHostGPU()
	e = &Env{GPU: g}
	err = e.openQP(testProg, common.Config{Device: "emu0", GIDIndex: 200}, QPOptions{}, io.Discard)
	require.Error(t, err)
	assert.ErrorContains(t, err, "GID index 200")
	require.NoError(t, e.Close())
	require.NoError(t, g.Close())
	assert.Empty(t, verbs.LeakReport())
}
