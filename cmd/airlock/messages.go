package main

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/airlockrun/airlock"
)

// stoppedAfter is the reason given when a flag's time limit stops a run:
// "stopped after 5s (--timeout)".
func stoppedAfter(d time.Duration, flagName string) string {
	return fmt.Sprintf("stopped after %s (%s)", d, flagName)
}

// explain rewrites the error of a run the command's own limits stopped in
// the terms of its flags: a time limit (timedOut, after timeout) as
// "stopped after 5s (--timeout)", and the memory limit in MiB with the flag
// that raises it.
func explain(res *airlock.Result, timedOut bool, timeout time.Duration, timeoutFlag string, memory int64, memoryFlag string) {
	if res.Error == nil {
		return
	}
	switch {
	case res.Status == airlock.StatusTerminated && timedOut:
		res.Error.Message = stoppedAfter(timeout, timeoutFlag)
	case res.Status == airlock.StatusMemory && memory > 0:
		res.Error.Message = fmt.Sprintf("the program needed more than its memory limit of %s (%s raises it)", mib(memory), memoryFlag)
	}
}

// mib is a size in MiB, as the --memory flags take it: "64 MiB", "0.5 MiB".
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatFloat(math.Round(float64(n)/(1<<20)*100)/100, 'f', -1, 64) + " MiB"
}
