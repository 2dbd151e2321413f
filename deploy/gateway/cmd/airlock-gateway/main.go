// Command airlock-gateway is the stateless front of `airlock serve` pods
// placed by kubernetes-sigs/agent-sandbox (package gateway): point the
// clients at it, run as many replicas as wanted.
//
//	airlock-gateway --namespace airlock --warm-pool airlock-serve \
//	    --router http://sandbox-router-svc.airlock.svc:8080 \
//	    --stateless http://airlock-stateless.airlock.svc:9000
//
// It reads the cluster's configuration as kubectl does ($KUBECONFIG, or
// the pod's service account), and needs create, get, list and watch on
// sandboxclaims in its namespace, nothing more: it reads the claims from
// an informer's cache (a session's requests cost the API server nothing
// once its claim exists) and writes new ones to the API server. Clients
// send one of the tokens of --token-file (each a tenant) as a bearer
// token.
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
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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
	tokenFile := flag.String("token-file", "", "the tenants' bearer tokens, one a line (also $GATEWAY_TOKENS, comma-separated)")
	allowNoToken := flag.Bool("allow-no-token", false, "serve without tokens: anyone who reaches the gateway is one tenant (for a network that decides who connects)")
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
	var tokens []string
	for _, t := range strings.Split(os.Getenv("GATEWAY_TOKENS"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tokens = append(tokens, t)
		}
	}
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fail("--token-file: %v", err)
		}
		for _, t := range strings.Split(string(b), "\n") {
			if t = strings.TrimSpace(t); t != "" {
				tokens = append(tokens, t)
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Reads from an informer's cache of the namespace's claims; writes to
	// the API server.
	informer, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: map[string]cache.Config{*namespace: {}}})
	if err != nil {
		fail("%v", err)
	}
	go informer.Start(ctx)
	c, err := client.New(cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: informer}})
	if err != nil {
		fail("%v", err)
	}
	g, err := gateway.New(gateway.Config{Client: c, Namespace: *namespace, WarmPool: *pool, Router: ru, Stateless: su,
		Port: *port, ReadyTimeout: *ready, SessionTTL: *ttl, Tokens: tokens, AllowNoToken: *allowNoToken, Log: log})
	if err != nil {
		fail("%v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.Handle("/", g)
	// A request's body is read within a minute (the gateway buffers it to
	// find its session); its answer may stream as long as it takes.
	hs := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
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
