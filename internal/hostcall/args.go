package hostcall

import (
	"fmt"
	"reflect"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/wasmvm"
	"github.com/airlockrun/airlock/js"
)

// Args are the arguments of one call, converted for its function. They
// are the call's own: an asynchronous call takes them to its goroutine.
type Args struct {
	text  string          // a JSONFunc's: the JSON text of the list
	typed bool            // prims are for the typed caller
	prims []engine.Arg    // a copy: the engine's are valid during the call only
	list  []any           // decoded, for the functions of decoded values
	in    []reflect.Value // converted, a context's place first if the function takes one
	// err is the conversion's error: the call's, as if the function had
	// returned it (an asynchronous call's promise rejects with it).
	err error
}

// callArgs decodes and converts the arguments of a call of f: primitives
// as the engine typed them (encoded nil), or the argument list in the
// binary format (a view of the sandbox's memory, read during the call
// only), paid for by spend first; spent is the error when it cannot.
// limit is the decoder's budget (codec.DecodeBinary). An error is the
// call's at once; a conversion's error is in the Args, for Call.
func callArgs(f *Func, in []engine.Arg, encoded []byte, spend func(int) bool, spent error, limit int) (Args, error) {
	if encoded == nil {
		if !spend(ArgCost(in)) {
			return Args{}, spent
		}
	} else if !spend(codec.BinaryCost(encoded)) {
		return Args{}, spent
	}
	return f.args(in, encoded, limit)
}

// listCost is what an argument list a worker process sends its host costs
// the run's budget: a JSON function's JSON text, any other function's
// list in the binary format.
func listCost(f *Func, list []byte) int {
	if f.json != nil {
		return codec.JSONCost(list)
	}
	return codec.BinaryCost(list)
}

// argsOfList converts the argument list a worker process sends its host
// for f: in the binary format, or for a JSONFunc its JSON text.
func argsOfList(f *Func, list []byte, limit int) (Args, error) {
	if f.json != nil {
		return Args{text: string(list)}, nil
	}
	if list == nil {
		list = []byte{}
	}
	return f.args(nil, list, limit)
}

func (f *Func) args(in []engine.Arg, encoded []byte, limit int) (Args, error) {
	if f.json != nil {
		var list []any
		if encoded != nil {
			var err error
			if list, err = decodeList(encoded, limit); err != nil {
				return Args{}, err
			}
		} else {
			list = fromArgs(in)
		}
		text, _ := argAt(list, 0).(string)
		return Args{text: text}, nil
	}
	if encoded == nil && f.typed != nil {
		return Args{typed: true, prims: append([]engine.Arg(nil), in...)}, nil
	}
	if f.list != nil {
		if encoded == nil {
			return Args{list: fromArgs(in)}, nil
		}
		list, err := decodeList(encoded, limit)
		if list == nil {
			list = []any{}
		}
		return Args{list: list}, err
	}
	sig := f.sig
	n := len(sig.params)
	if sig.variadic {
		n--
	}
	first := 0
	if sig.withCtx {
		first = 1
	}
	vals := make([]reflect.Value, first+n, first+n+1)
	for i := 0; i < n; i++ {
		vals[first+i] = reflect.New(sig.params[i]).Elem()
	}
	var elem func() reflect.Value
	if sig.variadic {
		t := sig.params[n]
		elem = func() reflect.Value { return reflect.New(t).Elem() }
	}
	if encoded == nil {
		for i, a := range in {
			var err error
			switch {
			case i < n:
				err = setPrim(a, vals[first+i])
			case sig.variadic:
				d := elem()
				err = setPrim(a, d)
				vals = append(vals, d)
			}
			if err != nil {
				return Args{err: argError(i, err)}, nil
			}
		}
		return Args{in: vals}, nil
	}
	out, failed, err := sig.conv.ArgsOfBytes(encoded, limit, vals[first:], elem)
	if err != nil {
		if failed < 0 {
			return Args{}, err // the list's, not a conversion's
		}
		return Args{err: argError(failed, err)}, nil
	}
	if first == 1 {
		out = append(vals[:1], out...)
	}
	return Args{in: out}, nil
}

// argError is the error of argument i (0-based).
func argError(i int, err error) error {
	return fmt.Errorf("argument %d: %w", i+1, err)
}

// setPrim converts a primitive argument to a parameter, as codec.Convert
// converts it.
func setPrim(a engine.Arg, dst reflect.Value) error {
	k := dst.Kind()
	switch a.Kind {
	case wasmvm.Undefined, wasmvm.Null:
		if k != reflect.Interface {
			return nil
		}
	case wasmvm.Number:
		if numeric, err := codec.SetNumber(a.Number, dst); numeric {
			return err
		}
	case wasmvm.String:
		if k == reflect.String {
			dst.SetString(a.Text)
			return nil
		}
	case wasmvm.Bool:
		if k == reflect.Bool {
			dst.SetBool(a.Bool)
			return nil
		}
	}
	return codec.ConvertInto(fromArg(a), dst)
}

// decodeList decodes an argument list in the binary format.
func decodeList(encoded []byte, limit int) ([]any, error) {
	v, err := codec.DecodeBinaryBytes(encoded, limit)
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	return list, nil
}

func fromArgs(in []engine.Arg) []any {
	args := make([]any, len(in))
	for i, a := range in {
		args[i] = fromArg(a)
	}
	return args
}

// fromArg is a primitive argument as a Go value.
func fromArg(a engine.Arg) any {
	switch a.Kind {
	case wasmvm.Null:
		return nil
	case wasmvm.Bool:
		return a.Bool
	case wasmvm.Number:
		return a.Number
	case wasmvm.String:
		return a.Text
	}
	return js.Undefined{}
}

// ArgCost is what primitive arguments cost a run's budget: a string its
// bytes, and every value 8.
func ArgCost(in []engine.Arg) int {
	n := 0
	for i := range in {
		n += 8
		if in[i].Kind == wasmvm.String {
			n += len(in[i].Text)
		}
	}
	return n
}
