package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Packages are installed by the server, outside the jail (which has no
// network), into the session's workspace: pip into /workspace/.packages
// (on the code's sys.path), npm into /workspace/node_modules. Neither
// runs code of the package while installing: pip takes wheels only
// (--only-binary=:all:, never a setup.py), npm runs no scripts
// (--ignore-scripts). Each install has its own timeout (Config.InstallTimeout)
// and is bounded by the workspace quota; its error says why, with the end
// of the installer's output.

// pipSpec and npmSpec are the package specifications accepted: a name and
// an optional version, never an option, a path or a URL. They are compiled
// on first use: their counted repetitions make large programs, and every
// command of the binary would pay for them at start.
var (
	pipSpec = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(\[[A-Za-z0-9,._-]{1,100}\])?((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]{1,50})?$`)
	})
	npmSpec = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]{0,99}/)?[a-z0-9][a-z0-9._~-]{0,213}(@[A-Za-z0-9.^~<>=*+_ |-]{1,50})?$`)
	})
)

// packagesDir is where pip installs, in the workspace.
const packagesDir = ".packages"

// errInstallDisabled is the answer when installs are not enabled.
var errInstallDisabled = errors.New("installing packages is disabled on this server (the operator enables it with --allow-install)")

// install installs a package for a subprocess execution.
func (j *jail) installPackage(ctx context.Context, manager, spec, dir string, q quota) (string, error) {
	if !j.install {
		return "", errInstallDisabled
	}
	ctx, cancel := context.WithTimeout(ctx, j.installTimeout)
	defer cancel()
	home, err := os.MkdirTemp("", "airlock-install-") // its working directory
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	var argv []string
	switch manager {
	case "pip":
		if !pipSpec().MatchString(spec) {
			return "", fmt.Errorf("install_package(%q): not a package name (with an optional version)", spec)
		}
		argv = []string{j.python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--no-cache-dir",
			"--only-binary=:all:", "--no-compile", "--timeout", "15", "--retries", "1", "--upgrade",
			"--target", filepath.Join(dir, packagesDir)}
		if j.pipIndex != "" {
			argv = append(argv, "--index-url", j.pipIndex)
		}
		argv = append(argv, "--", spec)
	case "npm":
		if !npmSpec().MatchString(spec) {
			return "", fmt.Errorf("installPackage(%q): not a package name (with an optional version)", spec)
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			return "", errors.New("installPackage: npm is not installed on the server")
		}
		argv = []string{npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save", "--no-package-lock",
			"--fetch-retries=1", "--loglevel=error", "--prefix", dir, spec}
	default:
		return "", fmt.Errorf("unknown package manager %q", manager)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = home
	// The installer is the operator's tool: it runs with the server's
	// environment and configuration (registry, proxy, certificates), never
	// with anything of the code's.
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "PIP_NO_WARN_SCRIPT_LOCATION=1")
	out := &capped{limit: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if j.user != nil { // what the server wrote becomes the jail user's
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
			if err == nil {
				os.Lchown(p, j.user.uid, j.user.gid)
			}
			return nil
		})
	}
	what := map[string]string{"pip": "install_package", "npm": "installPackage"}[manager]
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%s(%q) timed out after %s", what, spec, j.installTimeout)
	}
	if err != nil {
		tail := strings.TrimSpace(out.String())
		if len(tail) > errTail {
			tail = "..." + tail[len(tail)-errTail:]
		}
		return "", fmt.Errorf("%s(%q) failed: %v: %s", what, spec, err, tail)
	}
	if _, _, err := q.usage(dir); err != nil {
		return "", fmt.Errorf("%s(%q): %w", what, spec, err)
	}
	return "installed " + spec, nil
}
