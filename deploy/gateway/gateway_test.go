package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxcontrollers "sigs.k8s.io/agent-sandbox/controllers"
	extensionsv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	extcontrollers "sigs.k8s.io/agent-sandbox/extensions/controllers"
	"sigs.k8s.io/agent-sandbox/extensions/controllers/queue"
	routerconfig "sigs.k8s.io/agent-sandbox/sandbox-router/config"
	"sigs.k8s.io/agent-sandbox/sandbox-router/proxy"

	"github.com/airlockrun/airlock/deploy/gateway"
	"github.com/airlockrun/airlock/runner"
	"github.com/airlockrun/airlock/service"
)

const ns = "airlock"

// cluster is agent-sandbox on a fake API server: its real reconcilers
// (warm pool, sandbox, claim) driven in a loop, with what a manager and a
// kubelet would add: the field indexes, the warm pool's sandboxes handed
// to the claims' queue as its event handler does, a garbage collector for
// what a deleted claim owned, and a kubelet that runs each pod as an
// in-process `airlock serve` on a loopback address of its own
// (127.0.0.N) and marks it ready.
type cluster struct {
	t      *testing.T
	c      client.Client
	port   string // every pod's port, as the template says
	mu     sync.Mutex
	pods   map[string]*podServer // by pod name
	nextIP int
	queued map[string]bool
}

type podServer struct {
	ip string
	hs *http.Server
}

// noTracer is agent-sandbox's Instrumenter, doing nothing (the reconcilers
// need one; the package's own no-op is internal).
type noTracer struct{}

func (noTracer) StartSpan(ctx context.Context, _ metav1.Object, _ string, _ map[string]string) (context.Context, func()) {
	return ctx, func() {}
}
func (noTracer) GetTraceContext(context.Context) string              { return "" }
func (noTracer) AddEvent(context.Context, string, map[string]string) {}
func (noTracer) IsRecording(context.Context) bool                    { return false }

// The reconcilers log through controller-runtime's logger: not here.
func init() { ctrl.SetLogger(logr.Discard()) }

func newCluster(t *testing.T, ctx context.Context) *cluster {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{sandboxv1beta1.AddToScheme, extensionsv1beta1.AddToScheme, corev1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	label := func(key string) client.IndexerFunc {
		return func(o client.Object) []string {
			if v, ok := o.GetLabels()[key]; ok {
				return []string{v}
			}
			return nil
		}
	}
	// The API server gives each object a UID, which owner references and
	// the garbage collector go by; the fake client does not.
	var uids atomic.Int64
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if o.GetUID() == "" {
				o.SetUID(types.UID(fmt.Sprintf("uid-%d", uids.Add(1))))
			}
			return c.Create(ctx, o, opts...)
		}}).
		WithStatusSubresource(&sandboxv1beta1.Sandbox{}, &extensionsv1beta1.SandboxClaim{}, &extensionsv1beta1.SandboxWarmPool{}, &corev1.Pod{}).
		WithIndex(&corev1.Pod{}, ".metadata.labels[agents.x-k8s.io/sandbox-name-hash]", label("agents.x-k8s.io/sandbox-name-hash")).
		WithIndex(&sandboxv1beta1.Sandbox{}, ".metadata.labels["+sandboxv1beta1.SandboxWarmPoolLabel+"]", label(sandboxv1beta1.SandboxWarmPoolLabel)).
		WithIndex(&extensionsv1beta1.SandboxWarmPool{}, extensionsv1beta1.TemplateRefField, func(o client.Object) []string {
			return []string{o.(*extensionsv1beta1.SandboxWarmPool).Spec.TemplateRef.Name}
		}).
		WithIndex(&extensionsv1beta1.SandboxClaim{}, extensionsv1beta1.WarmPoolRefField, func(o client.Object) []string {
			return []string{o.(*extensionsv1beta1.SandboxClaim).Spec.WarmPoolRef.Name}
		}).
		Build()
	// The port every pod listens on, free on the loopback addresses used.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	k := &cluster{t: t, c: c, port: port, pods: map[string]*podServer{}, nextIP: 2, queued: map[string]bool{}}
	portNum := 0
	fmt.Sscan(port, &portNum)
	objs := []client.Object{
		&extensionsv1beta1.SandboxTemplate{ObjectMeta: metav1.ObjectMeta{Name: "airlock-serve", Namespace: ns},
			Spec: extensionsv1beta1.SandboxTemplateSpec{SandboxBlueprint: sandboxv1beta1.SandboxBlueprint{PodTemplate: sandboxv1beta1.PodTemplate{
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "airlock", Image: "airlock",
					Args: []string{"serve", "--addr", "0.0.0.0:" + port}, Ports: []corev1.ContainerPort{{ContainerPort: int32(portNum)}}}}}}},
				NetworkPolicyManagement: extensionsv1beta1.NetworkPolicyManagementUnmanaged}},
		&extensionsv1beta1.SandboxWarmPool{ObjectMeta: metav1.ObjectMeta{Name: "airlock-pool", Namespace: ns},
			Spec: extensionsv1beta1.SandboxWarmPoolSpec{Replicas: ptr.To(int32(2)), TemplateRef: extensionsv1beta1.SandboxTemplateRef{Name: "airlock-serve"}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	go k.run(ctx)
	t.Cleanup(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, p := range k.pods {
			p.hs.Close()
		}
	})
	return k
}

// run drives the reconcilers, the queue, the garbage collector and the
// kubelet until ctx ends.
func (k *cluster) run(ctx context.Context) {
	q := queue.NewSimpleSandboxQueue()
	sandboxes := &sandboxcontrollers.SandboxReconciler{Client: k.c, Scheme: k.c.Scheme(), Tracer: noTracer{}, ClusterDomain: "cluster.local"}
	claims := &extcontrollers.SandboxClaimReconciler{Client: k.c, Scheme: k.c.Scheme(), WarmSandboxQueue: q, Recorder: events.NewFakeRecorder(1000), Tracer: noTracer{}}
	pools := &extcontrollers.SandboxWarmPoolReconciler{Client: k.c, Scheme: k.c.Scheme(), MaxBatchSize: 10}
	reconcile := func(r interface {
		Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
	}, list client.ObjectList, names func() []types.NamespacedName) {
		if err := k.c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return
		}
		for _, n := range names() {
			r.Reconcile(ctx, ctrl.Request{NamespacedName: n}) // an error is retried on the next pass, as a manager would
		}
	}
	for ctx.Err() == nil {
		var pl extensionsv1beta1.SandboxWarmPoolList
		reconcile(pools, &pl, func() (out []types.NamespacedName) {
			for _, p := range pl.Items {
				out = append(out, types.NamespacedName{Namespace: ns, Name: p.Name})
			}
			return
		})
		var sl sandboxv1beta1.SandboxList
		reconcile(sandboxes, &sl, func() (out []types.NamespacedName) {
			for _, s := range sl.Items {
				out = append(out, types.NamespacedName{Namespace: ns, Name: s.Name})
				// the claims' event handler: a pool's sandbox goes to the queue
				if ref := metav1.GetControllerOf(&s); ref != nil && ref.Kind == "SandboxWarmPool" && !k.queued[s.Name] {
					k.queued[s.Name] = true
					q.Add(queue.GetNamespacedWarmPoolName(ns, ref.Name), queue.SandboxKey{Namespace: ns, Name: s.Name, NodeName: s.Status.NodeName})
				}
			}
			return
		})
		var cl extensionsv1beta1.SandboxClaimList
		reconcile(claims, &cl, func() (out []types.NamespacedName) {
			for _, c := range cl.Items {
				out = append(out, types.NamespacedName{Namespace: ns, Name: c.Name})
			}
			return
		})
		k.collectGarbage(ctx)
		k.kubelet(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// collectGarbage deletes the sandboxes and pods whose controller is gone,
// as Kubernetes' garbage collector does.
func (k *cluster) collectGarbage(ctx context.Context) {
	live := map[types.UID]bool{}
	var cl extensionsv1beta1.SandboxClaimList
	var pl extensionsv1beta1.SandboxWarmPoolList
	var sl sandboxv1beta1.SandboxList
	var pods corev1.PodList
	k.c.List(ctx, &cl, client.InNamespace(ns))
	k.c.List(ctx, &pl, client.InNamespace(ns))
	k.c.List(ctx, &sl, client.InNamespace(ns))
	k.c.List(ctx, &pods, client.InNamespace(ns))
	for _, c := range cl.Items {
		live[c.UID] = true
	}
	for _, p := range pl.Items {
		live[p.UID] = true
	}
	for _, s := range sl.Items {
		if ref := metav1.GetControllerOf(&s); ref != nil && !live[ref.UID] {
			k.c.Delete(ctx, &s)
			continue
		}
		live[s.UID] = true
	}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && !live[ref.UID] {
			k.c.Delete(ctx, &p)
		}
	}
}

// kubelet runs each new pod as an `airlock serve` of its own on the next
// loopback address, and marks it running and ready; a pod that is gone
// stops.
func (k *cluster) kubelet(ctx context.Context) {
	var pods corev1.PodList
	if err := k.c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	seen := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.Name] = true
		if _, ok := k.pods[p.Name]; ok {
			continue
		}
		ip := fmt.Sprintf("127.0.0.%d", k.nextIP)
		k.nextIP++
		l, err := net.Listen("tcp", net.JoinHostPort(ip, k.port))
		if err != nil {
			k.t.Errorf("pod %s: %v", p.Name, err)
			continue
		}
		srv, err := service.New(service.Config{Workspace: k.t.TempDir()}, slog.New(slog.DiscardHandler))
		if err != nil {
			k.t.Errorf("pod %s: %v", p.Name, err)
			continue
		}
		name, h := p.Name, srv.Handler()
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Test-Pod", name)
			h.ServeHTTP(w, r)
		})}
		go hs.Serve(l)
		k.pods[p.Name] = &podServer{ip: ip, hs: hs}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP = ip
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		if err := k.c.Status().Update(ctx, p); err != nil {
			k.t.Logf("pod %s status: %v", p.Name, err)
		}
	}
	for name, p := range k.pods {
		if !seen[name] {
			p.hs.Close()
			delete(k.pods, name)
		}
	}
}

func (k *cluster) podNames() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for n := range k.pods {
		out = append(out, n)
	}
	return out
}

func (k *cluster) ipOf(pod string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p := k.pods[pod]; p != nil {
		return p.ip
	}
	return ""
}

// post sends a javascript execution through the gateway and returns the
// pod that ran it and the execution's output.
func post(t *testing.T, gw http.Handler, session, code string) (pod, output string) {
	t.Helper()
	return postWith(t, gw, session, code, nil)
}

// postWith is post with request headers.
func postWith(t *testing.T, gw http.Handler, session, code string, headers map[string]string) (pod, output string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"code": code, "runtime": "javascript", "session_id": session})
	req := httptest.NewRequest("POST", "/v1/execute", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer t1")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	gw.ServeHTTP(w, req)
	var out struct {
		Output, Status, Error string
	}
	b, _ := io.ReadAll(w.Result().Body)
	if err := json.Unmarshal(b, &out); err != nil || w.Code != 200 {
		t.Fatalf("session %q: %d %s", session, w.Code, b)
	}
	return w.Result().Header.Get("X-Test-Pod"), out.Output
}

// A session's requests land on one pod, taken from the warm pool (its
// workspace holds what an earlier request wrote), two sessions on two pods, a new gateway (a
// restart, another replica) finds the same pod, a deleted claim is made
// again (a new pod, an empty workspace), and a request without a session
// goes to the stateless service.
func TestGatewayOnAgentSandbox(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k := newCluster(t, ctx)
	rcfg := routerconfig.Defaults()
	rcfg.AllowLoopbackPodIP = true // the stand-in pods are on loopback addresses
	routerHandler := proxy.NewHandler(proxy.Options{Config: &rcfg})
	var uidSeen atomic.Bool // a client's X-Sandbox-UID reached the router
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Sandbox-UID") != "" {
			uidSeen.Store(true)
		}
		routerHandler.ServeHTTP(w, r)
	}))
	defer router.Close()
	stateless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test-Pod", "stateless")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":"stateless","status":"success"}`)
	}))
	defer stateless.Close()
	ru, _ := url.Parse(router.URL)
	su, _ := url.Parse(stateless.URL)
	port := 0
	fmt.Sscan(k.port, &port)
	newGateway := func() *gateway.Gateway {
		g, err := gateway.New(gateway.Config{Client: k.c, Namespace: ns, WarmPool: "airlock-pool", Router: ru, Stateless: su, Port: port, ReadyTimeout: time.Minute,
			Tokens: []string{"t1", "t2"}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	gw := newGateway()
	// The warm pool fills (its two sandboxes' pods ready) before the
	// first session, which then takes a warm pod.
	for i := 0; len(k.podNames()) < 2; i++ {
		if i == 6000 {
			t.Fatalf("the warm pool has %v after a minute", k.podNames())
		}
		time.Sleep(10 * time.Millisecond)
	}

	podA, out := post(t, gw, "alice", `writeFile("notes.txt", "alice's"); setResult("written")`)
	if podA == "" || out != `"written"` {
		t.Fatalf("alice: pod %q, output %s", podA, out)
	}
	podA2, out := post(t, gw, "alice", `setResult(readFile("notes.txt"))`)
	if podA2 != podA || out != `"alice's"` {
		t.Errorf("alice again: pod %q (first %q), output %s", podA2, podA, out)
	}
	if podA == gateway.ClaimName(gateway.Tenant("t1"), "alice") {
		t.Errorf("alice's pod %s was made for her claim, not taken from the warm pool", podA)
	}
	// bob names alice's pod by the router's headers: they do not pass.
	podB, out := postWith(t, gw, "bob", `let s; try { s = readFile("notes.txt") } catch (e) { s = "none" } setResult(s)`,
		map[string]string{"X-Sandbox-ID": podA, "X-Sandbox-Pod-IP": k.ipOf(podA), "X-Sandbox-UID": "alice-uid"})
	if uidSeen.Load() {
		t.Error("a client's X-Sandbox-UID reached the router")
	}
	if podB == podA || out != `"none"` {
		t.Errorf("bob: pod %q (alice's %q), output %s", podB, podA, out)
	}
	// The gateway in the client's process (runner's HTTP client): bob's
	// pod, as through the gateway.
	rr := runner.NewHTTPRunner("http://airlock.invalid", runner.WithHTTPClient(&http.Client{Transport: gw.Transport(nil)}), runner.WithToken("t1"))
	defer rr.Close()
	res, err := rr.Run(ctx, runner.CodeRequest{Code: `writeFile("notes.txt", "bob's"); setResult("ok")`, Runtime: "javascript", SessionID: "bob"}, nil)
	if err != nil || res.Output != `"ok"` {
		t.Fatalf("bob through the transport: %+v %v", res, err)
	}
	if pod, out := post(t, gw, "bob", `setResult(readFile("notes.txt"))`); pod != podB || out != `"bob's"` {
		t.Errorf("bob after the transport: pod %q (before %q), output %s", pod, podB, out)
	}
	// A new gateway: the same claim, the same pod.
	if pod, out := post(t, newGateway(), "alice", `setResult(readFile("notes.txt"))`); pod != podA || out != `"alice's"` {
		t.Errorf("alice through a new gateway: pod %q, output %s", pod, out)
	}
	// The claim deleted (an operator, a TTL): made again, on another pod.
	// Another tenant's "alice" is another session, on another pod; no
	// token is a 401.
	if pod, out := postWith(t, gw, "alice", `let s; try { s = readFile("notes.txt") } catch (e) { s = "none" } setResult(s)`,
		map[string]string{"Authorization": "Bearer t2"}); pod == podA || out != `"none"` {
		t.Errorf("another tenant's alice: pod %q (alice's %q), output %s", pod, podA, out)
	}
	noToken := httptest.NewRequest("POST", "/v1/execute", strings.NewReader(`{"code":"1","session_id":"alice"}`))
	w := httptest.NewRecorder()
	gw.ServeHTTP(w, noToken)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d", w.Code)
	}
	claim := &extensionsv1beta1.SandboxClaim{ObjectMeta: metav1.ObjectMeta{Name: gateway.ClaimName(gateway.Tenant("t1"), "alice"), Namespace: ns}}
	if err := k.c.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	// (as with background deletion, its sandbox and pod go a little later:
	// wait for the garbage collector, or the new claim finds the old sandbox
	// by its name)
	for i := 0; ; i++ {
		var sb sandboxv1beta1.Sandbox
		if err := k.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim.Name}, &sb); err != nil {
			break
		}
		if i == 6000 {
			t.Fatalf("the deleted claim's sandbox is still there after a minute: owners %+v, finalizers %v, deleted %v", sb.OwnerReferences, sb.Finalizers, sb.DeletionTimestamp)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pod, out := post(t, gw, "alice", `let s; try { s = readFile("notes.txt") } catch (e) { s = "none" } setResult(s)`)
	if pod == "" || out != `"none"` { // (a sandbox made for a claim, and its pod, are named after it)
		t.Errorf("alice after her claim was deleted: pod %q, output %s", pod, out)
	}
	// No session: the stateless service.
	if pod, _ := post(t, gw, "", `setResult(1)`); pod != "stateless" {
		t.Errorf("no session: pod %q", pod)
	}
	if !strings.HasPrefix(gateway.ClaimName(gateway.Tenant("t1"), "alice"), "airlock-") || gateway.ClaimName(gateway.Tenant("t1"), "alice") == gateway.ClaimName(gateway.Tenant("t1"), "bob") ||
		gateway.ClaimName(gateway.Tenant("t1"), "alice") == gateway.ClaimName(gateway.Tenant("t2"), "alice") {
		t.Errorf("claim names %q %q %q", gateway.ClaimName(gateway.Tenant("t1"), "alice"), gateway.ClaimName(gateway.Tenant("t1"), "bob"), gateway.ClaimName(gateway.Tenant("t2"), "alice"))
	}
}

// Without a session and without a stateless service, a request is refused;
// a body past the bound is refused before anything is claimed; the
// configuration's required fields are checked.
func TestGatewayRefusals(t *testing.T) {
	scheme := runtime.NewScheme()
	extensionsv1beta1.AddToScheme(scheme)
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ru, _ := url.Parse("http://router.invalid")
	if _, err := gateway.New(gateway.Config{Client: c, Namespace: ns, Router: ru, AllowNoToken: true}); err == nil {
		t.Error("no warm pool: no error")
	}
	if _, err := gateway.New(gateway.Config{Client: c, Namespace: ns, WarmPool: "p", Router: ru}); err == nil || !strings.Contains(err.Error(), "no Tokens") {
		t.Errorf("no tokens: %v", err)
	}
	g, err := gateway.New(gateway.Config{Client: c, Namespace: ns, WarmPool: "p", Router: ru, MaxBodyBytes: 64, AllowNoToken: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"code":"1"}`, http.StatusBadRequest},
		{`{"code":"` + strings.Repeat("x", 100) + `","session_id":"s"}`, http.StatusRequestEntityTooLarge},
	} {
		req := httptest.NewRequest("POST", "/v1/execute", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.body, w.Code, c.want)
		}
	}
	var claims extensionsv1beta1.SandboxClaimList
	if c.List(context.Background(), &claims); len(claims.Items) != 0 {
		t.Errorf("claims were made: %v", claims.Items)
	}
	// One body held at most (MaxBuffered 1): while a request's body is
	// being read, another is a 503; once it ends, the slot is free again.
	g1, err := gateway.New(gateway.Config{Client: c, Namespace: ns, WarmPool: "p", Router: ru, AllowNoToken: true, MaxBuffered: 1})
	if err != nil {
		t.Fatal(err)
	}
	send := func(body io.Reader) int {
		w := httptest.NewRecorder()
		g1.ServeHTTP(w, httptest.NewRequest("POST", "/v1/execute", body))
		return w.Code
	}
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() { first <- send(pr) }()
	pw.Write([]byte(`{"code":"1"`)) // returns once the gateway reads: it holds the slot
	if got := send(strings.NewReader(`{"code":"1"}`)); got != http.StatusServiceUnavailable {
		t.Errorf("a second body while one is held: %d", got)
	}
	pw.Write([]byte(`}`))
	pw.Close()
	if got := <-first; got != http.StatusBadRequest { // (no session, no stateless service)
		t.Errorf("the first request: %d", got)
	}
	if got := send(strings.NewReader(`{"code":"1"}`)); got != http.StatusBadRequest {
		t.Errorf("after the first ended: %d", got)
	}
}
