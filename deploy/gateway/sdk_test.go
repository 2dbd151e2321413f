package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	agentsfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"
	extfake "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned/fake"
	extensionsv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/airlockrun/airlock/service"
)

// agent-sandbox's own Go client (clients/go/sandbox, its default
// legacy-python runtime, Direct URL mode) drives an `airlock serve` pod
// unchanged: it claims a sandbox, runs shell commands in the pod's jail,
// writes, reads, lists and tests files of the session's workspace, and its
// two sandboxes are two sessions, each with a workspace of its own. The
// cluster side is a stand-in here (the SDK's typed clients are the
// generated fakes, and a claim is bound to a ready Sandbox as it is
// created); TestGatewayOnAgentSandbox runs the real reconcilers.
func TestAgentSandboxGoClient(t *testing.T) {
	ctx := context.Background()
	srv, err := service.New(service.Config{Workspace: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// The pod, recording the session header the SDK sends.
	var mu sync.Mutex
	sessions := map[string]bool{}
	h := srv.Handler()
	pod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sessions[r.Header.Get("X-Sandbox-ID")] = true
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer pod.Close()

	agents := agentsfake.NewSimpleClientset()
	ext := extfake.NewSimpleClientset()
	var n atomic.Int64
	ext.PrependReactor("create", "sandboxclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		claim := a.(k8stesting.CreateAction).GetObject().(*extensionsv1beta1.SandboxClaim)
		if claim.Name == "" { // the API server's generateName
			claim.Name = fmt.Sprintf("%s%d", claim.GenerateName, n.Add(1))
		}
		sb := &sandboxv1beta1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: "airlock-pool-" + claim.Name, Namespace: claim.Namespace},
			Status: sandboxv1beta1.SandboxStatus{Conditions: []metav1.Condition{{Type: string(sandboxv1beta1.SandboxConditionReady), Status: metav1.ConditionTrue}}}}
		if _, err := agents.AgentsV1beta1().Sandboxes(claim.Namespace).Create(ctx, sb, metav1.CreateOptions{}); err != nil {
			return true, nil, err
		}
		claim.Status.SandboxStatus.Name = sb.Name
		return false, claim, nil // stored by the default reactor
	})
	client, err := sandbox.NewClient(ctx, sandbox.Options{APIURL: pod.URL, Quiet: true,
		K8sHelper: &sandbox.K8sHelper{AgentsClient: agents.AgentsV1beta1(), ExtensionsClient: ext.ExtensionsV1beta1(), Log: logr.Discard()}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.DeleteAll(ctx)
	one, err := client.CreateSandbox(ctx, "airlock-pool", ns)
	if err != nil {
		t.Fatal(err)
	}
	two, err := client.CreateSandbox(ctx, "airlock-pool", ns)
	if err != nil {
		t.Fatal(err)
	}

	res, err := one.Run(ctx, "echo hello; echo oops >&2; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "hello\n" || res.Stderr != "oops\n" || res.ExitCode != 3 {
		t.Errorf("run: %+v", res)
	}
	if err := one.Write(ctx, "notes.txt", []byte("one's notes")); err != nil {
		t.Fatal(err)
	}
	if b, err := one.Read(ctx, "notes.txt"); err != nil || string(b) != "one's notes" {
		t.Errorf("read: %q %v", b, err)
	}
	if res, err := one.Run(ctx, "cat notes.txt"); err != nil || res.Stdout != "one's notes" {
		t.Errorf("the command sees the file: %+v %v", res, err)
	}
	entries, err := one.List(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(entries, func(e sandbox.FileEntry) bool { return e.Name == "notes.txt" }) {
		t.Errorf("list: %+v", entries)
	}
	if ok, err := one.Exists(ctx, "notes.txt"); err != nil || !ok {
		t.Errorf("exists: %v %v", ok, err)
	}
	// The other sandbox is another session: its workspace is its own.
	if ok, err := two.Exists(ctx, "notes.txt"); err != nil || ok {
		t.Errorf("the other sandbox sees the file: %v %v", ok, err)
	}
	if _, err := two.Read(ctx, "notes.txt"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the other sandbox reads the file: %v", err)
	}
	// A path out of the workspace is refused.
	if _, err := one.Read(ctx, "../../etc/passwd"); err == nil {
		t.Error("read out of the workspace: no error")
	}
	mu.Lock()
	defer mu.Unlock()
	if !sessions[one.SandboxName()] || !sessions[two.SandboxName()] {
		t.Errorf("session headers %v, want the sandboxes' names %s and %s", sessions, one.SandboxName(), two.SandboxName())
	}
}
