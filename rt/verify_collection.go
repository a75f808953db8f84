package rt

// The check that generated constructors run on each data collection they are given, before
// anything can index it: a nil or malformed collection would otherwise fail deep inside a
// task, or make a rank wait for tiles that nobody owns.

import (
	"errors"
	"fmt"
	"reflect"
)

// ErrBadCollection is wrapped by the errors of VerifyCollection.
var ErrBadCollection = errors.New("rt: bad collection")

// VerifyCollection checks a data collection given to a generated constructor:
//   - it is not nil, nor an interface holding a nil pointer, map, slice, func or chan;
//   - a *TiledMatrix has 2 indices and a *Vector 1, as many as dims (the number of
//     arguments the program's references use), a process grid that contains its rank, and
//     tile counts that agree with its sizes;
//   - a Validate() error method of c, if it has one, returns nil.
//
// The error matches ErrBadCollection and wrap (a generated program's Err<Name>Argument),
// and its text ends with wrap's: "is nil: Chain: bad argument". A Validate error becomes
// "<wrap>: <its text>" and matches it too. wrap may be nil; ErrBadCollection's text stands
// for it then.
func VerifyCollection(c Collection, dims int, wrap error) error {
	tag, errs := wrap, []error{ErrBadCollection, wrap}
	if wrap == nil {
		tag, errs = ErrBadCollection, errs[:1]
	}
	bad := func(format string, a ...any) error {
		return &collectionError{msg: fmt.Sprintf(format, a...) + ": " + tag.Error(), errs: errs}
	}
	if c == nil {
		return bad("is nil")
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		if v.IsNil() {
			return bad("is a nil %s", v.Type())
		}
	}
	switch c := c.(type) {
	case *TiledMatrix:
		if dims != 2 {
			return bad("is a TiledMatrix (2 indices) but the program uses %d", dims)
		}
		// A rank beyond the grid is allowed: it owns no tile (uneven jobs).
		if c.P < 1 || c.Q < 1 || c.KP < 1 || c.KQ < 1 || c.Rank < 0 {
			return bad("process grid %dx%d (supertiles %dx%d) with rank %d is invalid", c.P, c.Q, c.KP, c.KQ, c.Rank)
		}
		if c.MB < 1 || c.NB < 1 || c.MT != (c.M+c.MB-1)/c.MB || c.NT != (c.N+c.NB-1)/c.NB {
			return bad("%dx%d matrix in %dx%d tiles of %dx%d is inconsistent", c.M, c.N, c.MT, c.NT, c.MB, c.NB)
		}
	case *Vector:
		if dims != 1 {
			return bad("is a Vector (1 index) but the program uses %d", dims)
		}
		if c.Ranks < 1 || c.Rank < 0 || c.Rank >= c.Ranks {
			return bad("%d ranks do not contain rank %d", c.Ranks, c.Rank)
		}
		if c.NB < 1 || c.NT != (c.N+c.NB-1)/c.NB {
			return bad("vector of %d in %d blocks of %d is inconsistent", c.N, c.NT, c.NB)
		}
	}
	if v, ok := c.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return &collectionError{msg: tag.Error() + ": " + err.Error(), errs: append(errs[:len(errs):len(errs)], err)}
		}
	}
	return nil
}

// collectionError is an error of VerifyCollection: its own text, and the errors it matches.
type collectionError struct {
	msg  string
	errs []error
}

func (e *collectionError) Error() string   { return e.msg }
func (e *collectionError) Unwrap() []error { return e.errs }
