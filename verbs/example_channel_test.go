package verbs_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gdaki/gpunetio/verbs"
)

// ExampleCompChannel waits for a completion without spinning: a CQ made
// with a completion channel is armed, the work is posted, and GetEvent
// sleeps until the device reports the completion; the event is
// acknowledged, the CQ polled, and re-armed for the next one.
func ExampleCompChannel() {
	a, b, done, err := openSides()
	defer done()
	if err != nil {
		fmt.Println(err)
		return
	}
	ch, err := a.ctx.NewCompChannel()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ch.Close()
	cq, err := a.dev.NewCQ(verbs.CQConfig{Size: 64, CompChannel: ch})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cq.Close()
	qp, err := a.dev.NewQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, SQWR: 32, RQWR: 32, SendMaxSGE: 1, RecvMaxSGE: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer qp.Close()
	if err := connect(qp, b.qp.QPN(), b.gid); err != nil {
		fmt.Println(err)
		return
	}
	if err := connect(b.qp, qp.QPN(), a.gid); err != nil {
		fmt.Println(err)
		return
	}

	if err := cq.ReqNotify(false); err != nil { // arm before the work
		fmt.Println(err)
		return
	}
	msg := "woken, not polled"
	copy(a.buf, msg)
	err = qp.PostSend(verbs.SendWR{WRID: 7, Opcode: verbs.WRRDMAWrite, Signaled: true,
		SGL:        []verbs.SGE{{Addr: a.addr(), Length: uint32(len(msg)), LKey: a.mr.LKey()}},
		RemoteAddr: b.addr(), RKey: b.mr.RKey()})
	if err != nil {
		fmt.Println(err)
		return
	}
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evCQ, err := ch.GetEvent(wait) // sleeps: no CPU while idle
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := evCQ.AckEvents(1); err != nil {
		fmt.Println(err)
		return
	}
	wcs := make([]verbs.WC, 4)
	n, err := evCQ.Poll(wcs)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := evCQ.ReqNotify(false); err != nil { // re-arm for the next completion
		fmt.Println(err)
		return
	}
	fmt.Printf("event on our CQ: %v; %d completion: wrid=%d status=%v\n", evCQ == cq, n, wcs[0].WRID, wcs[0].Status)
	fmt.Printf("emu1 buffer: %q\n", b.buf[:len(msg)])
	// Output:
	// event on our CQ: true; 1 completion: wrid=7 status=IBV_WC_SUCCESS
	// emu1 buffer: "woken, not polled"
}
