package gateway_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"sigs.k8s.io/yaml"

	extensionsv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
)

// manifestKinds makes the Go type each kind of the manifests decodes into
// (strictly: a field the type does not know is an error).
var manifestKinds = map[string]func() any{
	"Namespace":               func() any { return &corev1.Namespace{} },
	"ServiceAccount":          func() any { return &corev1.ServiceAccount{} },
	"Service":                 func() any { return &corev1.Service{} },
	"Deployment":              func() any { return &appsv1.Deployment{} },
	"HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"Role":                    func() any { return &rbacv1.Role{} },
	"RoleBinding":             func() any { return &rbacv1.RoleBinding{} },
	"NetworkPolicy":           func() any { return &networkingv1.NetworkPolicy{} },
	"SandboxTemplate":         func() any { return &extensionsv1beta1.SandboxTemplate{} },
	"SandboxWarmPool":         func() any { return &extensionsv1beta1.SandboxWarmPool{} },
}

// The manifests of deploy/k8s, offline: the kustomization lists every
// file; each object decodes strictly into its Go type (no unknown field);
// agent-sandbox's objects validate against the schemas of the CRDs of the
// version this module requires; the gateway's Role grants create, get,
// list and watch on sandboxclaims and nothing else; the session pods mount
// no service-account token; every pod that runs airlock serve without a
// token, and the router, is selected by a NetworkPolicy.
func TestManifests(t *testing.T) {
	dir := filepath.Join("..", "k8s")
	var kust struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Namespace  string   `json:"namespace"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name, NewName, NewTag string
		} `json:"images"`
	}{}); err != nil {
		t.Errorf("kustomization.yaml: %v", err)
	}
	yaml.Unmarshal(b, &kust)
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(kust.Resources, name) {
			t.Errorf("%s is not in kustomization.yaml", name)
		}
	}
	schemas := crdSchemas(t)
	kinds := map[string]int{}
	guarded := map[string]bool{} // pods a NetworkPolicy selects, by app.kubernetes.io/name
	var tokenless []string       // pods that run airlock serve without a token
	for _, name := range kust.Resources {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil || head.Kind == "" {
				t.Fatalf("%s: a document without a kind: %v", name, err)
			}
			kinds[head.Kind]++
			newTyped, ok := manifestKinds[head.Kind]
			if !ok {
				t.Errorf("%s: an unexpected kind %s", name, head.Kind)
				continue
			}
			typed := newTyped()
			if err := yaml.UnmarshalStrict(doc, typed); err != nil {
				t.Errorf("%s %s: %v", name, head.Kind, err)
			}
			if sv, ok := schemas[head.APIVersion+"/"+head.Kind]; ok {
				var obj map[string]any
				yaml.Unmarshal(doc, &obj)
				if res := sv.Validate(obj); !res.IsValid() {
					t.Errorf("%s %s against its CRD: %v", name, head.Kind, res.Errors)
				}
			} else if strings.Contains(head.APIVersion, "agents.x-k8s.io") {
				t.Errorf("%s %s: no CRD of agent-sandbox has it", name, head.Kind)
			}
			switch v := typed.(type) {
			case *rbacv1.Role:
				if len(v.Rules) != 1 || !slices.Equal(v.Rules[0].APIGroups, []string{"extensions.agents.x-k8s.io"}) ||
					!slices.Equal(v.Rules[0].Resources, []string{"sandboxclaims"}) ||
					!slices.Equal(v.Rules[0].Verbs, []string{"create", "get", "list", "watch"}) || len(v.Rules[0].ResourceNames) != 0 {
					t.Errorf("the gateway's Role grants %+v", v.Rules)
				}
			case *networkingv1.NetworkPolicy:
				open := false // a rule without a from lets anyone in
				for _, rule := range v.Spec.Ingress {
					open = open || len(rule.From) == 0
				}
				if open {
					t.Errorf("NetworkPolicy %s lets anyone in", v.Name)
				} else {
					guarded[v.Spec.PodSelector.MatchLabels["app.kubernetes.io/name"]] = true
				}
			case *appsv1.Deployment:
				if args := strings.Join(v.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(args, "--allow-no-token") {
					tokenless = append(tokenless, v.Spec.Template.Labels["app.kubernetes.io/name"])
				}
			case *extensionsv1beta1.SandboxTemplate:
				if a := v.Spec.PodTemplate.Spec.AutomountServiceAccountToken; a == nil || *a {
					t.Errorf("the session pods mount a service-account token")
				}
				if args := strings.Join(v.Spec.PodTemplate.Spec.Containers[0].Args, " "); strings.Contains(args, "--allow-no-token") {
					tokenless = append(tokenless, v.Spec.PodTemplate.ObjectMeta.Labels["app.kubernetes.io/name"])
				}
			}
		}
	}
	// A pod without a token is reachable only as a NetworkPolicy says.
	for _, name := range tokenless {
		if !guarded[name] {
			t.Errorf("%s runs without a token and no NetworkPolicy selects it", name)
		}
	}
	if len(tokenless) == 0 || !guarded["sandbox-router"] {
		t.Errorf("tokenless pods %v, policies for %v", tokenless, guarded)
	}
	for _, k := range []string{"SandboxTemplate", "SandboxWarmPool", "Deployment", "HorizontalPodAutoscaler", "Role", "RoleBinding", "NetworkPolicy"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in the manifests", k)
		}
	}
}

// crdSchemas are the validators of agent-sandbox's CRDs, by
// "group/version/Kind", from the module this one requires.
func crdSchemas(t *testing.T) map[string]validation.SchemaValidator {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/agent-sandbox").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "k8s", "crds", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no CRDs in the agent-sandbox module")
	}
	schemas := map[string]validation.SchemaValidator{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				t.Fatal(err)
			}
			sv, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				t.Fatal(err)
			}
			schemas[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = sv
		}
	}
	return schemas
}
