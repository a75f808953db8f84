package ce_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Runtime misuse gives a named sentinel error, never a panic or a hang.

func TestLifecycleMisuse(t *testing.T) {
	ctx := context.Background()
	w := ce.NewWorld(1)
	e := w.Engines()[0]
	c, err := e.Attach(ce.RoleWorker, "early") // allowed: the path is decided at Start
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryNewMsg(1); !errors.Is(err, ce.ErrNotStarted) {
		t.Errorf("TryNewMsg before Start: %v", err)
	}
	if _, err := c.Register(ce.HostMem(make([]byte, 1))); !errors.Is(err, ce.ErrNotStarted) {
		t.Errorf("Register before Start: %v", err)
	}
	if _, err := e.Attach(ce.RoleComm, "x"); !errors.Is(err, ce.ErrWrongRole) {
		t.Errorf("Attach(RoleComm): %v", err)
	}
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.Direct() {
		t.Error("a worker attached before Start on a LevelMultiple world is not direct")
	}
	if err := e.Start(ctx); !errors.Is(err, ce.ErrStarted) {
		t.Errorf("second Start: %v", err)
	}
	dm, _ := e.Attach(ce.RoleDeviceManager, "dm")
	if err := dm.Barrier(ctx); !errors.Is(err, ce.ErrWrongRole) {
		t.Errorf("device manager Barrier: %v", err)
	}
	if err := c.SendAM(0, ce.FirstUserTag, nil, nil); !errors.Is(err, ce.ErrReleased) {
		t.Errorf("SendAM(nil): %v", err)
	}
	if _, err := c.Register(ce.DeviceMem(0x1000, 64)); !errors.Is(err, ce.ErrDeviceMemory) {
		t.Errorf("device memory on a host-only transport: %v", err)
	}
	reg, _ := c.Register(ce.HostMem(make([]byte, 8)))
	if err := reg.Release(); err != nil {
		t.Fatal(err)
	}
	if err := reg.Release(); !errors.Is(err, ce.ErrReleased) {
		t.Errorf("second Release: %v", err)
	}
	if err := c.Get(ce.Transfer{Local: reg, Remote: reg.Key(), Len: 1}, nil); !errors.Is(err, ce.ErrReleased) {
		t.Errorf("Get on a released registration: %v", err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(ctx); !errors.Is(err, ce.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}

	never := w.Engines()[0]
	if err := never.Close(ctx); err != nil {
		t.Errorf("Close before Start: %v", err)
	}
}

func TestRegisterTagMisuse(t *testing.T) {
	w := ce.NewWorld(1, ce.WorldMaxAM(1024))
	e := w.Engines()[0]
	h := func(*ce.Caller, ce.Rank, []byte) {}
	for _, tc := range []struct {
		tag    ce.Tag
		maxLen int
		h      ce.Handler
		want   error
	}{
		{ce.TagActivate - 1, 8, h, ce.ErrTagRange},
		{ce.MaxTags, 8, h, ce.ErrTagRange},
		{ce.FirstUserTag, 8, nil, ce.ErrUnknownTag},
		{ce.FirstUserTag, -1, h, ce.ErrTooLarge},
	} {
		if err := e.RegisterTag(tc.tag, tc.maxLen, tc.h); !errors.Is(err, tc.want) {
			t.Errorf("RegisterTag(%d, %d): %v, want %v", tc.tag, tc.maxLen, err, tc.want)
		}
	}
	if err := e.RegisterTag(ce.FirstUserTag, 4096, h); err != nil { // checked against MaxAM at Start
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); !errors.Is(err, ce.ErrTooLarge) {
		t.Errorf("Start with a tag above MaxAM: %v", err)
	}
}
