// Command airlock-gateway is the stateless front of `airlock serve` pods
// placed by kubernetes-sigs/agent-sandbox (package gateway): point the
// clients at it, run as many replicas as wanted.
//
//	airlock-gateway --namespace airlock --warm-pool airlock-serve \
//	    --router http://sandbox-router-svc.agent-sandbox-system.svc:8080 \
//	    --stateless http://airlock-stateless.airlock.svc:9000
//
// It reads the cluster's configuration as kubectl does ($KUBECONFIG, or
// the pod's service account), and needs create, get and watch on
// sandboxclaims in its namespace, nothing more.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/airlockrun/airlock/deploy/gateway"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	namespace := flag.String("namespace", "", "namespace of the claims, the warm pool and the pods (default: $POD_NAMESPACE)")
	pool := flag.String("warm-pool", "", "the SandboxWarmPool the claims draw from (its template runs airlock serve)")
	router := flag.String("router", "", "agent-sandbox's sandbox router, e.g. http://sandbox-router-svc.agent-sandbox-system.svc:8080")
	stateless := flag.String("stateless", "", "the Service of the stateless airlock serve Deployment, for requests without a session (default: such requests are refused)")
	port := flag.Int("port", 8888, "the port airlock serve listens on in the pods")
	ready := flag.Duration("ready-timeout", time.Minute, "how long a request waits for its session's claim to become Ready")
	ttl := flag.Duration("session-ttl", 0, "a new claim's lifetime (0: until deleted)")
	grace := flag.Duration("shutdown-grace", 30*time.Second, "on SIGTERM, how long requests in flight may take")
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if *namespace == "" {
		*namespace = os.Getenv("POD_NAMESPACE")
	}
	ru, err := url.Parse(*router)
	if err != nil || ru.Host == "" {
		fail("--router: want the router's URL, got %q", *router)
	}
	var su *url.URL
	if *stateless != "" {
		if su, err = url.Parse(*stateless); err != nil || su.Host == "" {
			fail("--stateless: want the Service's URL, got %q", *stateless)
		}
	}
	scheme := runtime.NewScheme()
	if err := extensionsv1beta1.AddToScheme(scheme); err != nil {
		fail("%v", err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fail("the cluster's configuration: %v", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fail("%v", err)
	}
	g, err := gateway.New(gateway.Config{Client: c, Namespace: *namespace, WarmPool: *pool, Router: ru, Stateless: su,
		Port: *port, ReadyTimeout: *ready, SessionTTL: *ttl})
	if err != nil {
		fail("%v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.Handle("/", g)
	hs := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		log.Info("shutting down", "grace", grace.String())
		sctx, cancel := context.WithTimeout(context.Background(), *grace)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	log.Info("serving", "addr", *listen, "namespace", *namespace, "warmPool", *pool)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "airlock-gateway: "+format+"\n", args...)
	os.Exit(2)
}
