package remote

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// gather is the root's inbox of tile keys (Gather).
type gather struct {
	mu   sync.Mutex
	keys []tileKey
	more chan struct{}
}

type tileKey struct {
	i, j int
	key  ce.RemoteKey
}

// gatherEntry: i u32, j u32, key.
const gatherEntry = 8 + ce.RemoteKeySize

func (n *Node) onGather(src ce.Rank, p []byte) {
	p = p[1:]
	if len(p)%gatherEntry != 0 {
		n.report(malformed(ErrSizeMismatch, "gather message of %d bytes from rank %d", len(p)+1, src))
		return
	}
	g := n.gatherBox()
	g.mu.Lock()
	for ; len(p) > 0; p = p[gatherEntry:] {
		k, err := ce.ParseRemoteKey(p[8:gatherEntry])
		if err != nil {
			n.report(fmt.Errorf("remote: gather key from rank %d: %w", src, err))
			continue
		}
		g.keys = append(g.keys, tileKey{int(binary.LittleEndian.Uint32(p)), int(binary.LittleEndian.Uint32(p[4:])), k})
	}
	g.mu.Unlock()
	select {
	case g.more <- struct{}{}:
	default:
	}
}

func (n *Node) gatherBox() *gather {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.gath == nil {
		n.gath = &gather{more: make(chan struct{}, 1)}
	}
	return n.gath
}

// GatherDense copies every tile of a (a matrix distributed over the job, with the same
// shape on every rank) into the dense column-major dst (leading dimension lda) on rank root;
// dst is only written on root and may be nil elsewhere. It is collective: every rank calls
// it, and it returns once root has every tile.
func (n *Node) GatherDense(ctx context.Context, a *rt.TiledMatrix, root int, dst []float64, lda int) error {
	if n.rank == root {
		a.GatherToDense(dst, lda)
	}
	var local []block
	want := 0
	for j := 0; j < a.NT; j++ {
		for i := 0; i < a.MT; i++ {
			if t := a.Tile(i, j); t != nil {
				local = append(local, block{i, j, t})
			} else if a.RankOf(rt.Ix(i, j)) != n.rank {
				want++
			}
		}
	}
	return n.gatherBlocks(ctx, root, local, want, a.MB*a.NB, func(i, j int, buf []float64) {
		for c := 0; c < a.TileCols(j); c++ {
			col := (j*a.NB + c) * lda
			copy(dst[col+i*a.MB:col+i*a.MB+a.TileRows(i)], buf[c*a.MB:c*a.MB+a.TileRows(i)])
		}
	})
}

// GatherVector copies every block of v (distributed over the job) into dst (at least v.N
// elements) on rank root. Collective, like GatherDense.
func (n *Node) GatherVector(ctx context.Context, v *rt.Vector, root int, dst []float64) error {
	var local []block
	want := 0
	put := func(k int, b []float64) { copy(dst[k*v.NB:min((k+1)*v.NB, v.N)], b) }
	for k := 0; k < v.NT; k++ {
		if b := v.Block(k); b != nil {
			local = append(local, block{k, 0, b})
			if n.rank == root {
				put(k, b)
			}
		} else if v.RankOf(rt.Ix(k)) != n.rank {
			want++
		}
	}
	return n.gatherBlocks(ctx, root, local, want, v.NB, func(i, _ int, buf []float64) { put(i, buf) })
}

type block struct {
	i, j int
	data []float64
}

// gatherBlocks sends the keys of the local blocks to root, where want blocks of elems
// elements are fetched one at a time and handed to place; a barrier ends it.
func (n *Node) gatherBlocks(ctx context.Context, root int, local []block, want, elems int, place func(i, j int, buf []float64)) error {
	if n.size == 1 {
		return nil
	}
	if n.rank != root {
		var regs []*ce.MemReg
		defer func() {
			for _, r := range regs {
				_ = r.Release()
			}
		}()
		var msg []byte
		flush := func() error {
			if len(msg) == 0 {
				return nil
			}
			m, err := n.other.NewMsg(ctx, len(msg)+1)
			if err != nil {
				return err
			}
			m.Bytes()[0] = kindGather
			copy(m.Bytes()[1:], msg)
			msg = msg[:0]
			return n.other.SendAM(ce.Rank(root), ce.TagTermination, m, nil)
		}
		for _, b := range local {
			r, err := n.other.Register(ce.HostMem(asBytes(b.data)))
			if err != nil {
				return err
			}
			regs = append(regs, r)
			msg = binary.LittleEndian.AppendUint32(msg, uint32(b.i))
			msg = binary.LittleEndian.AppendUint32(msg, uint32(b.j))
			msg, _ = r.Key().AppendBinary(msg)
			if len(msg)+gatherEntry >= 4000 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		return n.other.Barrier(ctx) // root has fetched everything
	}
	g := n.gatherBox()
	buf := make([]float64, elems)
	reg, err := n.other.Register(ce.HostMem(asBytes(buf)))
	if err != nil {
		return err
	}
	defer func() { _ = reg.Release() }()
	done := make(chan error, 1)
	for got := 0; got < want; {
		g.mu.Lock()
		keys := g.keys
		g.keys = nil
		g.mu.Unlock()
		for _, k := range keys {
			if k.key.Len() != len(buf)*8 {
				return fmt.Errorf("%w: block (%d, %d) of %d bytes, want %d", ErrSizeMismatch, k.i, k.j, k.key.Len(), len(buf)*8)
			}
			if err := n.other.Get(ce.Transfer{Local: reg, Remote: k.key, Len: len(buf) * 8},
				func(_ *ce.Caller, err error) { done <- err }); err != nil {
				return err
			}
			select {
			case err := <-done:
				if err != nil {
					return err
				}
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			place(k.i, k.j, buf)
			got++
		}
		if got < want {
			select {
			case <-g.more:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
	return n.other.Barrier(ctx)
}
