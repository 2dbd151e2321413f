package mcp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// The states of an upstream.
const (
	stateConnecting = "connecting"
	stateReady      = "ready"
	stateFailed     = "failed"
)

// A link is a configured upstream server and what became of it. Its fields
// other than name, ns, cfg and first are guarded by the server's mu.
type link struct {
	name  string
	ns    string
	cfg   ServerConfig
	first chan struct{} // closed when the first attempt has ended

	state    string
	u        *upstream // when ready
	err      error     // when failed
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

// keep connects l, each attempt bounded by ConnectTimeout, waits while the
// session lasts, and tries again after a failure or a disconnection, with
// a backoff from 1 s doubling to RetryMax, until the server closes.
func (s *Server) keep(l *link) {
	defer s.wg.Done()
	backoff := time.Second
	for {
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.ConnectTimeout)
		u, err := connect(ctx, s.client, l.name, l.cfg)
		cancel()
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s (the connect timeout)", s.opts.ConnectTimeout)
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			if u != nil {
				u.session.Close()
			}
			return
		}
		l.attempts++
		if err != nil {
			l.state, l.err, l.retry = stateFailed, err, time.Now().Add(backoff)
		} else {
			l.state, l.u, l.err = stateReady, u, nil
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
			s.mu.Lock()
			if s.ctx.Err() != nil {
				s.mu.Unlock()
				return
			}
			l.u = nil
			l.state, l.retry = stateFailed, time.Now().Add(backoff)
			l.err = errors.New("the connection ended")
			if werr != nil {
				l.err = fmt.Errorf("the connection ended: %v", werr)
			}
			s.mu.Unlock()
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
			fmt.Fprintf(&b, "- %s (%s): ready, %d tools\n", l.name, l.ns, len(l.u.tools))
		case stateConnecting:
			fmt.Fprintf(&b, "- %s (%s): connecting\n", l.name, l.ns)
		default:
			retry := "not retried: fix the configuration"
			if l.cfg.check() == nil && !l.retry.IsZero() {
				retry = fmt.Sprintf("retried in %s", max(0, time.Until(l.retry)).Round(time.Second))
			}
			fmt.Fprintf(&b, "- %s (%s): unavailable, %v (%s)\n", l.name, l.ns, l.err, retry)
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
