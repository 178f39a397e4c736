package helmtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	chartDir = "../arrowhead"
	release  = "ah"
	// fullname is the objects' name for release "ah" (release-chart).
	fullname = "ah-arrowhead"
	// requireEnv turns a missing helm binary into a failure (set by .ci/run).
	requireEnv = "ARROWHEAD_REQUIRE_INTEGRATION"
)

// helm returns the helm binary: $HELM, then PATH, then $(go env
// GOPATH)/bin, where .ci/run installs it.
func helm(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "helm")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "no helm binary (set HELM, or: go install helm.sh/helm/v3/cmd/helm@v3.22.0)"
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", requireEnv, msg)
	}
	t.Skipf("\n*** SKIPPING %s: %s\n*** Set %s=1 to make this a failure.", t.Name(), msg, requireEnv)
	return ""
}

// run runs helm with args and returns its combined output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	// No repository or cache state from the machine leaks in.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// render runs helm template with extra arguments and strict-decodes the
// result.
func render(t *testing.T, args ...string) []runtime.Object {
	t.Helper()
	out, err := run(t, append([]string{"template", release, chartDir, "--namespace", "mcp"}, args...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, out)
	}
	return decodeAll(t, out)
}

// decoder strict-decodes YAML into the registered k8s.io/api types:
// unknown and duplicate fields are errors, and so is an unregistered kind.
var decoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, batchv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
}()

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func decodeAll(t *testing.T, stream string) []runtime.Object {
	t.Helper()
	var objs []runtime.Object
	for _, doc := range docSeparator.Split(stream, -1) {
		if !hasContent(doc) {
			continue
		}
		obj, _, err := decoder.Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("strict decoding a rendered object: %v\n%s", err, doc)
		}
		objs = append(objs, obj)
	}
	return objs
}

// hasContent reports whether a YAML document holds more than comments.
func hasContent(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

func kinds(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%T", o))
	}
	slices.Sort(out)
	return out
}

func only[T runtime.Object](t *testing.T, objs []runtime.Object) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d objects of type %T rendered, want 1", len(found), zero)
	}
	return found[0]
}

// checkPodSecurity asserts the hardening every pod of the chart carries.
func checkPodSecurity(t *testing.T, what string, spec corev1.PodSpec) {
	t.Helper()
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", what)
	}
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("%s: pod runs as uid 0 or an unset uid", what)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod seccompProfile is not RuntimeDefault", what)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Errorf("%s: the service-account token is mounted", what)
	}
	if len(spec.Containers) == 0 {
		t.Fatalf("%s: no containers", what)
	}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Errorf("%s/%s: no securityContext", what, c.Name)
			continue
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("%s/%s: root filesystem is writable", what, c.Name)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("%s/%s: privilege escalation allowed", what, c.Name)
		case sc.Privileged != nil && *sc.Privileged:
			t.Errorf("%s/%s: privileged", what, c.Name)
		case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
			t.Errorf("%s/%s: runAsNonRoot is not true", what, c.Name)
		case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
			t.Errorf("%s/%s: capabilities are not exactly drop [ALL]", what, c.Name)
		case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
			t.Errorf("%s/%s: seccompProfile is not RuntimeDefault", what, c.Name)
		}
		for _, e := range c.Env {
			if e.Value != "" && secretName(e.Name) {
				t.Errorf("%s/%s: %s carries a value; secrets must come from a secretKeyRef", what, c.Name, e.Name)
			}
		}
	}
}

func secretName(name string) bool {
	return strings.HasSuffix(name, "_DSN") || strings.HasSuffix(name, "_API_KEY") ||
		name == "ARROWHEAD_REDIS_URL" || name == "ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS"
}

// checkProbes asserts liveness on /health and readiness on /ready, both on
// the container's named HTTP port.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	port := -1
	for _, p := range c.Ports {
		if p.Name == "http" {
			port = int(p.ContainerPort)
		}
	}
	if port != 8000 {
		t.Errorf("container port http = %d, want 8000", port)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/health"}, {"readiness", c.ReadinessProbe, "/ready"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe missing or not an HTTP GET", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("%s probe = %s on %s, want %s on http", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), p.path)
		}
	}
}

// checkMounts asserts that every directory the server needs at start-up
// is mounted where the ConfigMap points: the state volume under the
// corpus, data and memory roots, a separate read-only jail (the server
// refuses to start without one), and a writable /tmp.
func checkMounts(t *testing.T, spec corev1.PodSpec, cm *corev1.ConfigMap) {
	t.Helper()
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	claim := map[string]bool{}
	for _, v := range spec.Volumes {
		claim[v.Name] = v.PersistentVolumeClaim != nil
	}
	state, ok := mounts["/var/lib/arrowhead"]
	if !ok || !claim[state.Name] || state.ReadOnly {
		t.Errorf("the state volume is not the claim, writable at /var/lib/arrowhead: %+v", mounts)
	}
	for _, v := range []string{"ARROWHEAD_DOCS_ROOT", "ARROWHEAD_DATA_DIR", "ARROWHEAD_MEMORY_ROOT"} {
		if !strings.HasPrefix(cm.Data[v], "/var/lib/arrowhead/") {
			t.Errorf("%s = %q is not on the state volume", v, cm.Data[v])
		}
	}
	jail, ok := mounts[cm.Data["ARROWHEAD_JAIL_ROOT"]]
	if !ok || !jail.ReadOnly || claim[jail.Name] {
		t.Errorf("the jail %q is not its own read-only mount: %+v", cm.Data["ARROWHEAD_JAIL_ROOT"], jail)
	}
	if tmp, ok := mounts["/tmp"]; !ok || tmp.ReadOnly {
		t.Error("no writable /tmp on the read-only root filesystem")
	}
}

func TestDefaultRender(t *testing.T) {
	objs := render(t)
	want := []string{"*v1.ConfigMap", "*v1.Deployment", "*v1.NetworkPolicy", "*v1.PersistentVolumeClaim", "*v1.PodDisruptionBudget", "*v1.Service"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Fatalf("rendered %v, want %v", got, want)
	}
	d := only[*appsv1.Deployment](t, objs)
	if d.Name != fullname || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Fatalf("deployment %s with replicas %v", d.Name, d.Spec.Replicas)
	}
	checkPodSecurity(t, "deployment", d.Spec.Template.Spec)
	checkProbes(t, d.Spec.Template.Spec.Containers[0])

	cm := only[*corev1.ConfigMap](t, objs)
	for k, v := range map[string]string{"ARROWHEAD_TRANSPORT": "http", "ARROWHEAD_HOST": "0.0.0.0", "ARROWHEAD_PORT": "8000", "ARROWHEAD_AUTH_ENABLED": "true"} {
		if cm.Data[k] != v {
			t.Errorf("ConfigMap %s = %q, want %q", k, cm.Data[k], v)
		}
	}
	if from := d.Spec.Template.Spec.Containers[0].EnvFrom; len(from) != 1 || from[0].ConfigMapRef == nil || from[0].ConfigMapRef.Name != cm.Name {
		t.Errorf("the container does not read the ConfigMap: %+v", from)
	}
	checkMounts(t, d.Spec.Template.Spec, cm)
	pvc := only[*corev1.PersistentVolumeClaim](t, objs)
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
		t.Errorf("one replica: access modes %v, want ReadWriteOnce", pvc.Spec.AccessModes)
	}
	svc := only[*corev1.Service](t, objs)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != intstr.FromString("http") {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
}

func TestScaledRender(t *testing.T) {
	objs := render(t, "-f", "testdata/scaled.yaml")
	want := []string{"*v1.ConfigMap", "*v1.Deployment", "*v1.Job", "*v1.NetworkPolicy", "*v1.PersistentVolumeClaim", "*v1.PodDisruptionBudget", "*v1.Service", "*v2.HorizontalPodAutoscaler"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Fatalf("rendered %v, want %v", got, want)
	}
	d := only[*appsv1.Deployment](t, objs)
	if d.Spec.Replicas != nil {
		t.Errorf("autoscaled deployment pins replicas to %d", *d.Spec.Replicas)
	}
	checkPodSecurity(t, "deployment", d.Spec.Template.Spec)
	checkProbes(t, d.Spec.Template.Spec.Containers[0])
	refs := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if refs["ARROWHEAD_REDIS_URL"] != "arrowhead/redis-url" || refs["ARROWHEAD_MEMORY_DSN"] != "arrowhead/memory-dsn" {
		t.Errorf("secret references = %v", refs)
	}

	hpa := only[*autoscalingv2.HorizontalPodAutoscaler](t, objs)
	if hpa.Spec.ScaleTargetRef.Kind != "Deployment" || hpa.Spec.ScaleTargetRef.Name != d.Name || hpa.Spec.MaxReplicas != 5 {
		t.Errorf("HPA targets %+v, max %d", hpa.Spec.ScaleTargetRef, hpa.Spec.MaxReplicas)
	}
	pdb := only[*policyv1.PodDisruptionBudget](t, objs)
	if pdb.Spec.Selector == nil || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != release {
		t.Errorf("PDB selector %+v", pdb.Spec.Selector)
	}
	pvc := only[*corev1.PersistentVolumeClaim](t, objs)
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
		t.Errorf("several replicas: access modes %v, want ReadWriteMany", pvc.Spec.AccessModes)
	}

	job := only[*batchv1.Job](t, objs)
	if job.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" {
		t.Errorf("migrate job hook = %q", job.Annotations["helm.sh/hook"])
	}
	checkPodSecurity(t, "migrate job", job.Spec.Template.Spec)
	if c := job.Spec.Template.Spec.Containers[0]; !slices.Equal(c.Args, []string{"migrate"}) {
		t.Errorf("migrate job args %v", c.Args)
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("migrate job restartPolicy %q", job.Spec.Template.Spec.RestartPolicy)
	}

	np := only[*networkingv1.NetworkPolicy](t, objs)
	checkEgress(t, np)
}

// checkEgress asserts the policy governs both directions and lets out only
// DNS, Redis, PostgreSQL, the JWKS host's range and HTTPS.
func checkEgress(t *testing.T, np *networkingv1.NetworkPolicy) {
	t.Helper()
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("policyTypes %v", np.Spec.PolicyTypes)
	}
	var ports []string
	for _, rule := range np.Spec.Egress {
		if len(rule.Ports) == 0 {
			t.Errorf("an egress rule without ports allows everything: %+v", rule)
		}
		for _, p := range rule.Ports {
			ports = append(ports, fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol))
		}
		for _, peer := range rule.To {
			if peer.IPBlock != nil && peer.IPBlock.CIDR != "203.0.113.0/24" {
				t.Errorf("unexpected egress range %s", peer.IPBlock.CIDR)
			}
		}
	}
	slices.Sort(ports)
	want := []string{"443/TCP", "53/TCP", "53/UDP", "5432/TCP", "6379/TCP", "8443/TCP"}
	if !slices.Equal(ports, want) {
		t.Errorf("egress ports %v, want %v", ports, want)
	}
}

// TestRefusedValues: a secret as a plain value, a setting given twice, a
// broken secret reference, or several replicas without Redis refuse to
// render, naming what is wrong.
func TestRefusedValues(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want string
	}{
		{"Redis URL as a value", []string{"config.ARROWHEAD_REDIS_URL=redis://:pw@redis:6379"}, "ARROWHEAD_REDIS_URL"},
		{"DSN as a value", []string{"config.ARROWHEAD_SQL_DSN=postgresql://u:pw@db/app"}, "ARROWHEAD_SQL_DSN"},
		{"API key as a value", []string{"config.ARROWHEAD_LLM_API_KEY=sk-x"}, "ARROWHEAD_LLM_API_KEY"},
		{"not an ARROWHEAD setting", []string{"config.HTTP_PROXY=http://proxy"}, "HTTP_PROXY"},
		{"set twice", []string{"config.ARROWHEAD_PROFILE=docs", "secretEnv.ARROWHEAD_PROFILE.name=s", "secretEnv.ARROWHEAD_PROFILE.key=k"}, "ARROWHEAD_PROFILE"},
		{"secret reference without a key", []string{"secretEnv.ARROWHEAD_REDIS_URL.name=s"}, "ARROWHEAD_REDIS_URL"},
		{"a setting the chart fixes", []string{"config.ARROWHEAD_TRANSPORT=stdio"}, "ARROWHEAD_TRANSPORT"},
		{"replicas without Redis", []string{"replicaCount=3"}, "ARROWHEAD_REDIS_URL"},
		{"autoscaling without Redis", []string{"autoscaling.enabled=true"}, "ARROWHEAD_REDIS_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"template", release, chartDir}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out, err := run(t, args...)
			if err == nil {
				t.Fatalf("rendered; want a refusal naming %s", tc.want)
			}
			if !strings.Contains(out, tc.want) {
				t.Fatalf("refusal does not name %s:\n%s", tc.want, out)
			}
			if strings.Contains(out, "pw@") || strings.Contains(out, "sk-x") {
				t.Fatalf("the refusal echoes the secret:\n%s", out)
			}
		})
	}
}

func TestLint(t *testing.T) {
	for _, args := range [][]string{{"lint", "--strict", chartDir}, {"lint", "--strict", chartDir, "-f", "testdata/scaled.yaml"}} {
		out, err := run(t, args...)
		if err != nil || !strings.Contains(out, "0 chart(s) failed") {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
}

// TestStrictDecodingRefusesUnknownFields is the control: the decoder the
// render tests rely on does refuse a misspelled field, a duplicate field
// and a kind it does not know.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	base := "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: 80\n"
	if _, _, err := decoder.Decode([]byte(base), nil, nil); err != nil {
		t.Fatalf("the control object itself was refused: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown field":   base + "  selectr:\n    app: x\n",
		"duplicate field": base + "  type: ClusterIP\n  type: NodePort\n",
		"unknown kind":    "apiVersion: v1\nkind: Servce\nmetadata:\n  name: x\n",
	} {
		if _, _, err := decoder.Decode(bytes.TrimSpace([]byte(doc)), nil, nil); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}
