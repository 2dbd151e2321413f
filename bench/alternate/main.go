// Command alternate runs commands in turn, round after round, and reports
// each one's wall time (min, p25, median) and CPU time (user + system, min
// and median) over the rounds: the harness BENCHMARKS.md's command-line
// figures come from. Alternating puts every command under the same changes
// of a shared machine's load.
//
//	go run ./alternate -n 30 'before=/tmp/airlock-old run ../examples/scripts/hello.ts' 'after=/tmp/airlock run ../examples/scripts/hello.ts'
//
// Each argument is label=command, the command split at spaces; an
// environment variable may lead it (label=GOGC=off /path/bin args).
// Output goes to /dev/null; a command that fails stops the rounds.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

type variant struct {
	label     string
	env, argv []string
	wall, cpu []time.Duration
}

func main() {
	n := flag.Int("n", 20, "rounds")
	flag.Parse()
	var vs []*variant
	for _, a := range flag.Args() {
		label, cmd, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "alternate: %q is not label=command\n", a)
			os.Exit(2)
		}
		v := &variant{label: label}
		for _, f := range strings.Fields(cmd) {
			if len(v.argv) == 0 && strings.Contains(f, "=") && !strings.HasPrefix(f, "/") {
				v.env = append(v.env, f)
				continue
			}
			v.argv = append(v.argv, f)
		}
		if len(v.argv) == 0 {
			fmt.Fprintf(os.Stderr, "alternate: %q has no command\n", a)
			os.Exit(2)
		}
		vs = append(vs, v)
	}
	for range *n {
		for _, v := range vs {
			c := exec.Command(v.argv[0], v.argv[1:]...)
			c.Env = append(os.Environ(), v.env...)
			start := time.Now()
			if err := c.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", v.label, err)
				os.Exit(1)
			}
			v.wall = append(v.wall, time.Since(start))
			v.cpu = append(v.cpu, c.ProcessState.UserTime()+c.ProcessState.SystemTime())
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, v := range vs {
		slices.Sort(v.wall)
		slices.Sort(v.cpu)
		fmt.Printf("%-12s wall min %6.1f p25 %6.1f med %6.1f  cpu min %6.1f med %6.1f ms  (n=%d)\n",
			v.label, ms(v.wall[0]), ms(v.wall[len(v.wall)/4]), ms(median(v.wall)), ms(v.cpu[0]), ms(median(v.cpu)), *n)
	}
}

func median(s []time.Duration) time.Duration {
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
