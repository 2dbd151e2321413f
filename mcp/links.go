package mcp

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// The states of an upstream.
const (
	stateConnecting = "connecting" // its first attempt
	stateReady      = "ready"
	stateFailed     = "failed" // an attempt failed, or it went away; retried
)

// The stages of an attempt to connect an upstream.
const (
	stageInitialize = "initialize" // started or reached; its answer to initialize awaited
	stageList       = "tools/list" // initialized; its list of tools awaited
)

// A link is a configured upstream server and what became of it. Its fields
// other than name, ns, cfg and first are guarded by the server's mu, which
// is only ever held to read or write them: nothing an upstream does (or
// does not do) happens under it.
type link struct {
	name  string
	ns    string
	cfg   ServerConfig
	first chan struct{} // closed when the first attempt has ended

	state    string
	stage    string    // of the attempt in progress, if any
	since    time.Time // when that stage began
	u        *upstream // when ready
	tools    []upstreamTool
	err      error // when failed
	attempts int
	retry    time.Time // when failed and retried: the next attempt
}

// check reports a configuration that no attempt can fix.
func (c ServerConfig) check() error {
	switch {
	case c.Command != "" && c.URL != "":
		return errors.New("give either command or url, not both")
	case c.Command == "" && c.URL == "":
		return errors.New("no command and no url")
	}
	return nil
}

// stageTimeouts are the bounds of one upstream's stages.
type stageTimeouts struct{ connect, list, call time.Duration }

// timeouts are l's bounds: its configuration's, else the server's.
func (s *Server) timeouts(l *link) stageTimeouts {
	pick := func(d Duration, def time.Duration) time.Duration {
		if d > 0 {
			return time.Duration(d)
		}
		return def
	}
	t := l.cfg.Timeouts
	return stageTimeouts{pick(t.Connect, s.opts.ConnectTimeout), pick(t.List, s.opts.ListTimeout), pick(t.Call, s.opts.CallTimeout)}
}

// setStage records that l's attempt has reached stage.
func (s *Server) setStage(l *link, stage string) {
	s.mu.Lock()
	l.stage, l.since = stage, time.Now()
	s.mu.Unlock()
}

// current is l's session if it is ready, else why it is not.
func (s *Server) current(l *link) (*upstream, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.state == stateReady {
		return l.u, ""
	}
	return nil, s.notReadyLocked(l)
}

// notReadyLocked says what l is doing instead of being ready, as an error
// a program gets: `upstream "fs" is not ready: initialize has not answered
// after 10s`. s.mu is held.
func (s *Server) notReadyLocked(l *link) string {
	return fmt.Sprintf("upstream %q is not ready: %s", l.name, s.stateLocked(l))
}

// stateLocked is what l is doing when it is not ready. s.mu is held.
func (s *Server) stateLocked(l *link) string {
	waiting := func() string {
		d := time.Since(l.since)
		if d >= time.Second {
			d = d.Round(time.Second)
		} else {
			d = d.Round(time.Millisecond)
		}
		return fmt.Sprintf("%s has not answered after %s", l.stage, d)
	}
	switch {
	case l.state == stateConnecting:
		return waiting()
	case l.cfg.check() != nil, l.retry.IsZero():
		return fmt.Sprintf("%v (not retried: fix the configuration)", l.err)
	case time.Now().Before(l.retry):
		return fmt.Sprintf("%v (retried in %s)", l.err, time.Until(l.retry).Round(time.Second))
	case l.stage == "":
		return fmt.Sprintf("%v (being retried)", l.err)
	default:
		return fmt.Sprintf("%v; connecting again: %s", l.err, waiting())
	}
}

// keep connects l, each stage bounded by its timeout, waits while the
// session lasts, and tries again after a failure or a disconnection, with
// a backoff from 1 s doubling to RetryMax, until the server closes. It
// holds s.mu only to record what happened.
func (s *Server) keep(l *link) {
	defer s.wg.Done()
	backoff := time.Second
	for {
		u, err := s.connect(l)
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			if u != nil {
				u.session.Close() // Close waits for this
			}
			return
		}
		l.attempts++
		l.stage = ""
		if err != nil {
			l.state, l.err, l.retry = stateFailed, err, time.Now().Add(backoff)
		} else {
			l.state, l.u, l.tools, l.err = stateReady, u, u.tools, nil
			backoff = time.Second
		}
		s.mu.Unlock()
		// The tools are registered anew before Ready can return, so that a
		// client that lists them after Ready sees this attempt's outcome
		// (closing first before it let TestProxy list a stale description).
		s.changed()
		select {
		case <-l.first:
		default:
			close(l.first)
		}
		if err == nil {
			// Wait while the session lasts; then the upstream has gone away.
			werr := u.session.Wait()
			how := ""
			if u.stdio != nil {
				how = u.stdio.exit(time.Second)
			}
			s.mu.Lock()
			if s.ctx.Err() != nil {
				s.mu.Unlock()
				return
			}
			l.u = nil
			l.state, l.retry = stateFailed, time.Now().Add(backoff)
			switch {
			case how != "":
				l.err = errors.New(how)
			case werr != nil:
				l.err = fmt.Errorf("the connection ended: %v", werr)
			default:
				l.err = errors.New("the connection ended")
			}
			s.mu.Unlock()
			go u.session.Close() // a command that will not exit is killed after stopGrace
			s.changed()
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, s.opts.RetryMax)
	}
}

// changed re-registers run_code (and list_apis), whose description names
// the ready upstreams; the SDK tells the clients the tool list changed.
func (s *Server) changed() {
	if s.ctx.Err() == nil {
		s.register()
	}
}

// status is the upstreams' state, one line each, for list_apis.
func (s *Server) status() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, l := range s.links {
		switch l.state {
		case stateReady:
			more := ""
			if l.u.more {
				more = fmt.Sprintf(" (it lists more: the first %d are offered)", maxTools)
			}
			fmt.Fprintf(&b, "- %s (%s): ready, %d tools%s\n", l.name, l.ns, len(l.u.tools), more)
		case stateConnecting:
			fmt.Fprintf(&b, "- %s (%s): connecting: %s\n", l.name, l.ns, s.stateLocked(l))
		default:
			fmt.Fprintf(&b, "- %s (%s): unavailable, %s\n", l.name, l.ns, s.stateLocked(l))
		}
	}
	return b.String()
}

// ModuleVersion is the version of the airlock module in this binary's
// build information: a release tag, a pseudo-version, or "(devel)".
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	const path = "github.com/airlockrun/airlock"
	if bi.Main.Path == path && bi.Main.Version != "" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "(devel)"
}
