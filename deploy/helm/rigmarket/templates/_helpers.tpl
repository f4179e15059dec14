{{/* Common names and labels. */}}
{{- define "rigmarket.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "rigmarket.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/part-of: rigmarket
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "name" "identity-2fa") */}}
{{- define "rigmarket.selector" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* <fullname>-<component>, the name of a component's objects (and of its Service: the edge finds the apps by it) */}}
{{- define "rigmarket.component" -}}
{{- printf "%s-%s" (include "rigmarket.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rigmarket.image" -}}
{{- $img := .root.Values.image -}}
{{- $repo := printf "%s/%s" $img.prefix .name -}}
{{- if $img.registry }}{{ $repo = printf "%s/%s" $img.registry $repo }}{{ end -}}
{{- printf "%s:%s" $repo (default .root.Chart.AppVersion $img.tag) -}}
{{- end -}}

{{- define "rigmarket.configName" -}}{{ include "rigmarket.fullname" . }}-config{{- end -}}
{{- define "rigmarket.secretName" -}}
{{- default (printf "%s-secrets" (include "rigmarket.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}
{{- define "rigmarket.databaseSecretName" -}}
{{- default (printf "%s-secrets" (include "rigmarket.fullname" .)) .Values.database.existingSecret -}}
{{- end -}}

{{/* Fails the render on values that cannot work. */}}
{{- define "rigmarket.validate" -}}
{{- if not (or .Values.database.url .Values.database.existingSecret) -}}
{{- fail "database.url (postgres://user:password@host:5432/db) or database.existingSecret is required: PostgreSQL is an external dependency" -}}
{{- end -}}
{{- if not .Values.kafka.brokers -}}
{{- fail "kafka.brokers (host:port[,host:port...]) is required: Kafka is an external dependency" -}}
{{- end -}}
{{- if not .Values.secrets.existingSecret -}}
{{- range $k := list "tfaKey" "instanceSealKey" "registryKey" -}}
{{- if not (index $.Values.secrets $k) -}}
{{- fail (printf "secrets.%s is required (32 bytes, hex or base64: openssl rand -hex 32), or name a secrets.existingSecret" $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $il := index .Values.apps "instance-lifecycle" -}}
{{- if or (gt (int $il.replicas) 1) $il.autoscaling.enabled -}}
{{- fail "apps.instance-lifecycle must run as one replica without autoscaling: host agents hold their WebSocket to one process (docs/adr/0010)" -}}
{{- end -}}
{{- end -}}
