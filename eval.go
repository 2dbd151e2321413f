package airlock

import "context"

// Eval runs source with opts on the default Runtime and waits for the
// outcome: Run, then Wait, in one call. ctx bounds the run (a deadline is a
// timeout: the run settles terminated), and so does opts.Timeout. The
// values given to report() are in Result.Reports. The error is Run's, for
// invalid options; a program's failure is the Result's Status and Error.
//
//	res, err := airlock.Eval(ctx, `export default 6 * 7`, airlock.Options{})
func Eval(ctx context.Context, source string, opts Options) (*Result, error) {
	return defaultRuntime().Eval(ctx, source, opts)
}

// Eval is [Eval] on this Runtime.
func (rt *Runtime) Eval(ctx context.Context, source string, opts Options) (*Result, error) {
	ex, err := rt.Run(ctx, source, opts)
	if err != nil {
		return nil, err
	}
	return ex.Wait(), nil
}
