{{/* The release's base name, at most 63 characters. */}}
{{- define "arrowhead.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "arrowhead.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "arrowhead.labels" -}}
{{ include "arrowhead.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "arrowhead.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* "true" when more than one replica can run at once. */}}
{{- define "arrowhead.multiReplica" -}}
{{- if or (gt (int .Values.replicaCount) 1) (and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) 1)) -}}
true
{{- end -}}
{{- end -}}

{{/*
The settings the chart fixes: the pod serves streamable HTTP on all its
interfaces (the Service and NetworkPolicy are the perimeter) and keeps its
state on the corpus volume.
*/}}
{{- define "arrowhead.fixedConfig" -}}
ARROWHEAD_TRANSPORT: http
ARROWHEAD_HOST: 0.0.0.0
ARROWHEAD_PORT: {{ .Values.containerPort | quote }}
ARROWHEAD_DOCS_ROOT: /var/lib/arrowhead/documents
ARROWHEAD_JAIL_ROOT: /var/lib/arrowhead/sandbox
ARROWHEAD_DATA_DIR: /var/lib/arrowhead/data
ARROWHEAD_MEMORY_ROOT: /var/lib/arrowhead/memory
{{- end -}}

{{/*
Refuses values that would put a secret in the chart, leave a setting
defined twice, or run several replicas without a shared rate-limit store.
*/}}
{{- define "arrowhead.validate" -}}
{{- $secretNames := list "ARROWHEAD_SQL_DSN" "ARROWHEAD_VECTOR_WRITE_DSN" "ARROWHEAD_MEMORY_DSN" "ARROWHEAD_STATE_DSN" "ARROWHEAD_REDIS_URL" "ARROWHEAD_EMBEDDING_API_KEY" "ARROWHEAD_LLM_API_KEY" "ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS" -}}
{{- range $name, $_ := .Values.config -}}
{{- if not (hasPrefix "ARROWHEAD_" $name) -}}
{{- fail (printf "config.%s: only ARROWHEAD_* settings belong in config" $name) -}}
{{- end -}}
{{- if or (has $name $secretNames) (hasSuffix "_DSN" $name) (hasSuffix "_API_KEY" $name) -}}
{{- fail (printf "config.%s is a secret: reference it under secretEnv instead of writing its value" $name) -}}
{{- end -}}
{{- if hasKey $.Values.secretEnv $name -}}
{{- fail (printf "%s is set in both config and secretEnv" $name) -}}
{{- end -}}
{{- if hasKey (include "arrowhead.fixedConfig" $ | fromYaml) $name -}}
{{- fail (printf "config.%s is set by the chart (the pod serves HTTP on containerPort and keeps its state on the corpus volume)" $name) -}}
{{- end -}}
{{- end -}}
{{- range $name, $ref := .Values.secretEnv -}}
{{- if not (hasPrefix "ARROWHEAD_" $name) -}}
{{- fail (printf "secretEnv.%s: only ARROWHEAD_* settings are passed" $name) -}}
{{- end -}}
{{- if or (not (kindIs "map" $ref)) (not $ref.name) (not $ref.key) -}}
{{- fail (printf "secretEnv.%s needs the name and key of an existing Secret" $name) -}}
{{- end -}}
{{- end -}}
{{- if and (include "arrowhead.multiReplica" .) (not (hasKey .Values.secretEnv "ARROWHEAD_REDIS_URL")) -}}
{{- fail "more than one replica needs ARROWHEAD_REDIS_URL under secretEnv: without it each replica keeps its own rate-limit budget" -}}
{{- end -}}
{{- end -}}

{{/* The env entries that read secretEnv's Secret references. */}}
{{- define "arrowhead.secretEnv" -}}
{{- range $name, $ref := .Values.secretEnv }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name }}
      key: {{ $ref.key }}
{{- end }}
{{- end -}}

{{- define "arrowhead.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "arrowhead.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
