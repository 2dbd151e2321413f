package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parseFlags parses fl from args with the flags anywhere among the
// arguments, as people write them (`airlock run hello.ts --json`), and
// returns the other arguments in order. Everything after a "--" is an
// argument, flags or not; "-" is an argument (standard input).
func parseFlags(fl *flag.FlagSet, args []string) ([]string, error) {
	var rest, after []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, after = args[:i], args[i+1:]
	}
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		args = fl.Args()
		if len(args) == 0 {
			return append(rest, after...), nil
		}
		// flag stopped at a non-flag argument: keep it, parse on.
		rest = append(rest, args[0])
		args = args[1:]
	}
}

// parseCommand parses a subcommand's flags, with usage as the head of its
// help, and checks that nargs arguments remain (-1: any number). It returns
// the arguments and ok, or the exit code: 0 after -h/--help (the help on
// stdout), 2 after a usage error (named on stderr).
func parseCommand(fl *flag.FlagSet, usage string, args []string, nargs int, stdout io.Writer) (rest []string, code int, ok bool) {
	help := func(w io.Writer) {
		out := fl.Output()
		fl.SetOutput(w)
		fmt.Fprint(w, usage+"\n\nflags:\n")
		fl.PrintDefaults()
		fl.SetOutput(out)
	}
	errw := fl.Output()
	fl.Usage = func() {} // errors are named below, once, without the whole help
	fl.SetOutput(io.Discard)
	var err error
	rest, err = parseFlags(fl, args)
	fl.SetOutput(errw)
	if errors.Is(err, flag.ErrHelp) {
		help(stdout)
		return nil, 0, false
	}
	if err != nil {
		fmt.Fprintf(errw, "%s: %v (%s -h lists the flags)\n", fl.Name(), err, fl.Name())
		return nil, 2, false
	}
	if nargs >= 0 && len(rest) != nargs {
		switch {
		case nargs == 0:
			fmt.Fprintf(errw, "%s: unexpected argument %q\n%s\n", fl.Name(), rest[0], usage)
		case len(rest) < nargs:
			fmt.Fprintf(errw, "%s: missing argument\n%s\n", fl.Name(), usage)
		default:
			fmt.Fprintf(errw, "%s: too many arguments: %q (quote an argument that has spaces)\n%s\n", fl.Name(), rest[nargs:], usage)
		}
		return nil, 2, false
	}
	return rest, 0, true
}

// durationValue is a flag.Value for a duration given with a unit (500ms,
// 5s, 2m) or as a bare number of seconds (5, 0.5).
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Get() any       { return time.Duration(*d) }
func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// parseDuration reads "5s", "500ms", "2m" or a bare number of seconds.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > float64(1<<62)/float64(time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if strings.Contains(err.Error(), "missing unit") {
			return 0, fmt.Errorf("%q has no unit: write it as 5s, 500ms or 2m, or as a number of seconds", s)
		}
		return 0, fmt.Errorf("%q is not a duration: write it as 5s, 500ms or 2m, or as a number of seconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

// durationFlag defines a duration flag that also takes a bare number of
// seconds.
func durationFlag(fl *flag.FlagSet, name string, def time.Duration, usage string) {
	v := durationValue(def)
	fl.Var(&v, name, usage+" (a `duration` such as 5s, 500ms or 2m, or a number of seconds)")
}

// flagDuration is the value of a flag defined by durationFlag.
func flagDuration(fl *flag.FlagSet, name string) time.Duration {
	return fl.Lookup(name).Value.(flag.Getter).Get().(time.Duration)
}

// version is the module's version from the build information: the tag
// of a `go install ...@version`, a pseudo-version from the checkout's
// commit, or "(devel)".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if v == "(devel)" && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + dirty
	}
	return v
}

// versionLine is what `airlock version` prints.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	goVersion := ""
	if bi != nil {
		goVersion = " " + bi.GoVersion
	}
	return "airlock " + version() + goVersion
}
