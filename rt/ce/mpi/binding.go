//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

// Handle constants are macros (Open MPI: addresses of globals; MPICH: integers), so they come
// from functions.
static MPI_Comm jdf_comm_world(void) { return MPI_COMM_WORLD; }
static MPI_Request jdf_request_null(void) { return MPI_REQUEST_NULL; }
static MPI_Datatype jdf_byte(void) { return MPI_BYTE; }
static MPI_Errhandler jdf_errors_return(void) { return MPI_ERRORS_RETURN; }
static int jdf_any_source(void) { return MPI_ANY_SOURCE; }
static int jdf_any_tag(void) { return MPI_ANY_TAG; }
static int jdf_err_in_status(void) { return MPI_ERR_IN_STATUS; }
static int jdf_undefined(void) { return MPI_UNDEFINED; }

static int jdf_status_error(MPI_Status *s) { return s->MPI_ERROR; }

// jdf_testsome is MPI_Testsome on arrays in C memory, passed as integers: the poll runs it
// all the time, and pointer arguments would make cgo check each of them on every call.
typedef struct { int rc, out; } jdf_testsome_t;
static jdf_testsome_t jdf_testsome(int n, uintptr_t reqs, uintptr_t idx, uintptr_t sts) {
	jdf_testsome_t r;
	r.rc = MPI_Testsome(n, (MPI_Request *)reqs, &r.out, (int *)idx, (MPI_Status *)sts);
	return r;
}

// jdf_arrival reads a completed receive's status at once: every cgo call costs more than the
// reads themselves, and an arrival is on the latency path.
typedef struct { int src, tag, count, cancelled; } jdf_arrival_t;
static jdf_arrival_t jdf_arrival(MPI_Status *s) {
	jdf_arrival_t a = {0, 0, 0, 0};
	MPI_Test_cancelled(s, &a.cancelled);
	if (!a.cancelled) {
		a.src = s->MPI_SOURCE;
		a.tag = s->MPI_TAG;
		if (MPI_Get_count(s, MPI_BYTE, &a.count) != MPI_SUCCESS || a.count == MPI_UNDEFINED) {
			a.count = 0;
		}
	}
	return a;
}

static int jdf_tag_ub(MPI_Comm c, int *value) {
	int *v = 0, flag = 0;
	int rc = MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag);
	*value = (rc == MPI_SUCCESS && flag) ? *v : 32767;
	return rc;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// This file is the whole binding: one small Go function per MPI call used, nothing else.
// Return codes become *Error values (every communicator uses MPI_ERRORS_RETURN).

type comm = C.MPI_Comm
type request = C.MPI_Request
type status = C.MPI_Status

// Error is a failed MPI call.
type Error struct {
	Call string
	Code int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("mpi: %s: %s (code %d)", e.Call, e.Msg, e.Code) }

func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	return &Error{Call: call, Code: int(rc), Msg: errorString(rc)}
}

func errorString(rc C.int) string {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	if C.MPI_Error_string(rc, &buf[0], &n) != C.MPI_SUCCESS {
		return "unknown error"
	}
	return C.GoStringN(&buf[0], n)
}

var (
	commWorld   = C.jdf_comm_world()
	requestNull = C.jdf_request_null()
	mpiByte     = C.jdf_byte()
	anySource   = C.jdf_any_source()
	anyTag      = C.jdf_any_tag()
	errInStatus = C.jdf_err_in_status()
	undefined   = C.jdf_undefined()
)

// levels maps ce.Level (the index) to MPI's thread levels.
var levels = [...]C.int{
	ce.LevelSingle:     C.MPI_THREAD_SINGLE,
	ce.LevelFunneled:   C.MPI_THREAD_FUNNELED,
	ce.LevelSerialized: C.MPI_THREAD_SERIALIZED,
	ce.LevelMultiple:   C.MPI_THREAD_MULTIPLE,
}

func levelToC(l ce.Level) C.int { return levels[min(max(l, ce.LevelSingle), ce.LevelMultiple)] }

func levelFromC(v C.int) ce.Level {
	for l, c := range levels {
		if c == v {
			return ce.Level(l)
		}
	}
	return ce.LevelSingle
}

func initialized() bool {
	var flag C.int
	C.MPI_Initialized(&flag)
	return flag != 0
}

func finalized() bool {
	var flag C.int
	C.MPI_Finalized(&flag)
	return flag != 0
}

func initThread(required ce.Level) (ce.Level, error) {
	var provided C.int
	rc := C.MPI_Init_thread(nil, nil, levelToC(required), &provided)
	return levelFromC(provided), check("MPI_Init_thread", rc)
}

func queryThread() (ce.Level, error) {
	var provided C.int
	rc := C.MPI_Query_thread(&provided)
	return levelFromC(provided), check("MPI_Query_thread", rc)
}

func isThreadMain() bool {
	var flag C.int
	C.MPI_Is_thread_main(&flag)
	return flag != 0
}

func commDup(c comm) (comm, error) {
	var out comm
	if err := check("MPI_Comm_dup", C.MPI_Comm_dup(c, &out)); err != nil {
		return out, err
	}
	return out, check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(out, C.jdf_errors_return()))
}

func setErrorsReturn(c comm) error {
	return check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(c, C.jdf_errors_return()))
}

func commRankSize(c comm) (int, int, error) {
	var r, s C.int
	if err := check("MPI_Comm_rank", C.MPI_Comm_rank(c, &r)); err != nil {
		return 0, 0, err
	}
	if err := check("MPI_Comm_size", C.MPI_Comm_size(c, &s)); err != nil {
		return 0, 0, err
	}
	return int(r), int(s), nil
}

func tagUB(c comm) (int, error) {
	var v C.int
	rc := C.jdf_tag_ub(c, &v)
	return int(v), check("MPI_Comm_get_attr(MPI_TAG_UB)", rc)
}

func isend(buf unsafe.Pointer, n, dst, tag int, c comm, req *request) error {
	return check("MPI_Isend", C.MPI_Isend(buf, C.int(n), mpiByte, C.int(dst), C.int(tag), c, req))
}

func irecv(buf unsafe.Pointer, n, src, tag int, c comm, req *request) error {
	return check("MPI_Irecv", C.MPI_Irecv(buf, C.int(n), mpiByte, C.int(src), C.int(tag), c, req))
}

// recvInit creates a persistent receive from any source with any tag.
func recvInit(buf unsafe.Pointer, n int, c comm, req *request) error {
	return check("MPI_Recv_init", C.MPI_Recv_init(buf, C.int(n), mpiByte, anySource, anyTag, c, req))
}

func start(req *request) error { return check("MPI_Start", C.MPI_Start(req)) }

// testsome tests reqs[0:n]; it returns how many completed (their indices and statuses are in
// idx and sts) and whether statuses carry per-request errors.
func testsome(n int, reqs *request, idx *C.int, sts *status) (int, bool, error) {
	r := C.jdf_testsome(C.int(n), C.uintptr_t(uintptr(unsafe.Pointer(reqs))),
		C.uintptr_t(uintptr(unsafe.Pointer(idx))), C.uintptr_t(uintptr(unsafe.Pointer(sts))))
	rc, out := r.rc, r.out
	if rc == errInStatus {
		return int(out), true, nil
	}
	if err := check("MPI_Testsome", rc); err != nil {
		return 0, false, err
	}
	if out == undefined {
		return 0, false, nil
	}
	return int(out), false, nil
}

func test(req *request, st *status) (bool, error) {
	var flag C.int
	rc := C.MPI_Test(req, &flag, st)
	return flag != 0, check("MPI_Test", rc)
}

func cancel(req *request) error { return check("MPI_Cancel", C.MPI_Cancel(req)) }

func testCancelled(st *status) bool {
	var flag C.int
	C.MPI_Test_cancelled(st, &flag)
	return flag != 0
}

func requestFree(req *request) error { return check("MPI_Request_free", C.MPI_Request_free(req)) }

// arrival reads a completed receive's status in one cgo call: its source, tag and byte
// count, unless it was cancelled.
func arrival(st *status) (src, tag, count int, cancelled bool) {
	a := C.jdf_arrival(st)
	return int(a.src), int(a.tag), int(a.count), a.cancelled != 0
}

func statusError(st *status) error {
	return check("request", C.jdf_status_error(st))
}

func ibarrier(c comm, req *request) error { return check("MPI_Ibarrier", C.MPI_Ibarrier(c, req)) }

func abort(c comm, code int) { C.MPI_Abort(c, C.int(code)) }

func finalize() error { return check("MPI_Finalize", C.MPI_Finalize()) }

// C memory.
func cmalloc(n int) unsafe.Pointer { return C.malloc(C.size_t(max(n, 1))) }
func cfree(p unsafe.Pointer)       { C.free(p) }
func crealloc(p unsafe.Pointer, n int) unsafe.Pointer {
	return C.realloc(p, C.size_t(max(n, 1)))
}

const (
	sizeofRequest = C.sizeof_MPI_Request
	sizeofStatus  = C.sizeof_MPI_Status
	sizeofInt     = C.sizeof_int
)

type cint = C.int
