package remote

// Data of task graphs built at run time (rt/dynamic) across ranks.
//
// Actors: a task graph on every rank (the Receiver), which runs the same insertion sequence
// everywhere and so knows, at each insertion, which rank holds the newest version of every
// datum and which ranks need it; its send tasks, which call SendData on the rank holding a
// version; the Node of the receiving rank, which takes the data on its comm goroutine and
// hands it to the graph's Receiver.
//
// A PTG activation names a task and lets the receiver recompute its successors from the
// rules. A task graph has no rules to recompute: what the receiver needs is the datum and its
// version, which its own copy of the insertion sequence maps to the task that waits for it.
// So the message is an activation of kind kindData whose two parameters are the DataKey
// (datum, version), and no class or flow. Everything else is the PTG path: the header, eager
// data up to the threshold, a Get from the sender's registered memory above it, the arenas the
// receiver's copies come from, the Get's notification, the failure reports and peer loss.
//
// Termination is PTG's: a send holds an action until its local completion, offered data one
// until the peer's Get completes (then done tells the sender that its memory may change
// again); an arrival feeds a receive task that the receiving graph inserted (or will insert),
// which its taskpool counts. So no message of its own is needed here either.
//
// Rejected design: a second protocol with its own tags for graph data. It would duplicate the
// eager and rendezvous paths, the buffer rules and the failure handling, and have to be kept
// in step with them.

import (
	"fmt"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// DataKey names one version of one datum of a task graph, the same on every rank.
type DataKey struct {
	Datum   uint64
	Version uint64
}

// Receiver takes the data that peers send with SendData to a taskpool added with AddGraph.
type Receiver interface {
	// Receive is called on the comm goroutine with the sending rank, the datum's key and a
	// copy holding its bytes, valid during the call (Retain it to keep it). It must not
	// block. An error fails the taskpool, here and on the other ranks.
	Receive(src int, key DataKey, cp *rt.Copy) error
}

// AddGraph adds tp, the taskpool of a task graph built at run time, to c (the Context created
// with RTOptions) as Add does a PTG taskpool, with r receiving the data that peers send to it.
// Every rank adds the same taskpools in the same order. tp's failures reach the other ranks,
// and a lost peer fails it, as for a PTG taskpool.
func (n *Node) AddGraph(c *rt.Context, tp *rt.Taskpool, r Receiver) error {
	if r == nil {
		return fmt.Errorf("remote: AddGraph of taskpool %s without a Receiver", tp.Name())
	}
	return n.add(c, tp, r)
}

// SendData sends the value of cp, version key of a datum of tp (added with AddGraph), to
// rank, where tp's Receiver gets it: inside the message up to the eager threshold, otherwise
// offered for the receiver's Get. It reports whether the transfer is pending: then done is
// called once the peer's Get has completed or the offer ended with tp (on the comm goroutine
// or the goroutine that ends tp), and cp's memory must not change until then. When it is not
// pending the bytes were copied already and done is never called. prio orders the receiver's
// Gets. Safe from any goroutine.
func (n *Node) SendData(tp *rt.Taskpool, key DataKey, cp *rt.Copy, rank int, prio int32, done func()) (pending bool, err error) {
	if rank < 0 || rank >= n.size || rank == n.rank {
		return false, fmt.Errorf("remote: data for rank %d from rank %d of %d", rank, n.rank, n.size)
	}
	st := n.state(tp)
	h := header{kind: kindData, tp: uint32(rt.Impl.TaskpoolID(tp)), nparams: 2, root: uint32(n.rank), prio: prio}
	h.params[0], h.params[1] = int64(key.Datum), int64(key.Version)
	n.stats.activations.Add(1)
	if err := n.sendCopy(n.other, st, tp, &h, cp, rank, done); err != nil {
		return false, fmt.Errorf("remote: sending datum %d version %d to rank %d: %w", key.Datum, key.Version, rank, err)
	}
	return h.data == dataGet, nil
}

// Bytes returns the bytes of v (aliasing them) when v is a value that can travel between
// ranks ([]float64, []float32, []int64, []int32 or []byte), or ErrUnsupportedType.
func Bytes(v any) ([]byte, error) {
	b, _, err := bytesOf(v)
	return b, err
}

// carryData receives one version of a datum of a task graph and hands it to its Receiver
// (arrival).
func (n *Node) carryData(c *ce.Caller, r *inbound, rest []byte) (kept bool, err error) {
	st, h := r.st, &r.h
	if st.recv == nil {
		return false, malformed(ErrUnknownFlow, "graph data for taskpool %s, which is no task graph", st.tp.Name())
	}
	if h.nparams != 2 || h.data == dataNone {
		return false, malformed(ErrSizeMismatch, "graph data with %d parameters and data mode %d", h.nparams, h.data)
	}
	if err := checkType(h.typ, h.size); err != nil {
		return false, fmt.Errorf("%s: %w", r.what(), err)
	}
	return n.fetch(c, r, rest)
}
