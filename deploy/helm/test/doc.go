// Package helmtest checks the Helm chart in deploy/helm/arrowhead: its tests
// render it with a real helm binary (built from helm.sh/helm/v3 at the
// version .ci/run pins), run helm lint, and strict-decode every rendered
// object into its k8s.io/api type with unknown and duplicate fields refused,
// offline. It is its own module so that helm's and Kubernetes' modules never
// enter the server's go.mod.
package helmtest
