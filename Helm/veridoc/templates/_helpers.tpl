{{/* Chart name, truncated to the 63 characters Kubernetes allows in names. */}}
{{- define "veridoc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: release-chart, or the release name when it already contains the chart name. */}}
{{- define "veridoc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "veridoc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The recommended app.kubernetes.io labels. */}}
{{- define "veridoc.labels" -}}
helm.sh/chart: {{ include "veridoc.chart" . }}
{{ include "veridoc.selectorLabels" . }}
app.kubernetes.io/version: {{ (.Values.image.tag | default .Chart.AppVersion) | toString | trunc 63 | quote }}
app.kubernetes.io/component: worker
app.kubernetes.io/part-of: veridoc
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "veridoc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "veridoc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The session API (veridoc serve): names and labels of its own. Its
app.kubernetes.io/name differs from the worker's so that neither's selector
(Deployment, Service, PodDisruptionBudget, autoscaler) matches the other's
pods; the worker's selector stays as it was, since a Deployment's selector
cannot change in an upgrade.
*/}}
{{- define "veridoc.serve.name" -}}
{{- printf "%s-serve" (include "veridoc.name" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{- define "veridoc.serve.fullname" -}}
{{- printf "%s-serve" (include "veridoc.fullname" . | trunc 57 | trimSuffix "-") }}
{{- end }}

{{- define "veridoc.serve.labels" -}}
helm.sh/chart: {{ include "veridoc.chart" . }}
{{ include "veridoc.serve.selectorLabels" . }}
app.kubernetes.io/version: {{ (.Values.image.tag | default .Chart.AppVersion) | toString | trunc 63 | quote }}
app.kubernetes.io/component: serve
app.kubernetes.io/part-of: veridoc
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "veridoc.serve.selectorLabels" -}}
app.kubernetes.io/name: {{ include "veridoc.serve.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "veridoc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "veridoc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "veridoc.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/* Where the chart mounts things; the rendered config refers to these. */}}
{{- define "veridoc.nonceKeyFile" -}}
{{- printf "/etc/veridoc/secrets/nonce/%s" .Values.secrets.nonceKey.key }}
{{- end }}

{{/* Replicas a scaler may reach: its maximum, capped at the partition count. */}}
{{- define "veridoc.maxReplicas" -}}
{{- $max := ternary .Values.keda.maxReplicaCount .Values.hpa.maxReplicas .Values.keda.enabled | int }}
{{- min $max (int .Values.requestTopicPartitions) }}
{{- end }}

{{/*
The config file: .Values.config with the settings the chart owns filled in.
Fails on settings that contradict the chart's own.
*/}}
{{- define "veridoc.config" -}}
{{- $config := deepCopy .Values.config }}
{{- $worker := default dict $config.worker }}
{{- if and (hasKey $worker "drainTimeoutSeconds") (ne (int $worker.drainTimeoutSeconds) (int .Values.drainTimeoutSeconds)) }}
{{- fail (printf "config.worker.drainTimeoutSeconds (%v) differs from drainTimeoutSeconds (%v): set only drainTimeoutSeconds" $worker.drainTimeoutSeconds .Values.drainTimeoutSeconds) }}
{{- end }}
{{- $_ := set $worker "drainTimeoutSeconds" (int .Values.drainTimeoutSeconds) }}
{{- $_ := set $config "worker" $worker }}
{{- if .Values.serve.enabled }}
{{- $serve := default dict $config.serve }}
{{- if and (hasKey $serve "port") (ne (int $serve.port) (int .Values.serve.port)) }}
{{- fail (printf "config.serve.port (%v) differs from serve.port (%v): set only serve.port" $serve.port .Values.serve.port) }}
{{- end }}
{{- if and (hasKey $serve "loopbackOnly") $serve.loopbackOnly }}
{{- fail "config.serve.loopbackOnly must not be true: the Service and the kubelet's probes reach serve on the pod's address" }}
{{- end }}
{{- $_ := set $serve "port" (int .Values.serve.port) }}
{{- $_ := set $serve "loopbackOnly" false }}
{{- $_ := set $config "serve" $serve }}
{{- end }}
{{- $replay := default dict $config.replay }}
{{- $_ := set $replay "nonceKeyFile" (include "veridoc.nonceKeyFile" .) }}
{{- $_ := set $config "replay" $replay }}
{{- toPrettyJson $config }}
{{- end }}

{{/* Rules the chart enforces; included by the Deployment so every render checks them. */}}
{{- define "veridoc.validate" -}}
{{- $drain := int .Values.drainTimeoutSeconds }}
{{- $grace := int .Values.terminationGracePeriodSeconds }}
{{- if lt $drain 1 }}
{{- fail "drainTimeoutSeconds must be at least 1" }}
{{- end }}
{{- if lt $grace (add $drain 5) }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least drainTimeoutSeconds + 5 (%d): the worker drains for drainTimeoutSeconds after SIGTERM, then leaves the group and flushes its producer" $grace (add $drain 5)) }}
{{- end }}
{{- if not .Values.secrets.nonceKey.existingSecret }}
{{- fail "secrets.nonceKey.existingSecret is required: a Secret with the nonce HMAC key shared by all workers" }}
{{- end }}
{{- if not .Values.config.tenants }}
{{- fail "config.tenants needs at least one tenant" }}
{{- end }}
{{- if not (dig "kafka" "bootstrapServers" "" .Values.config) }}
{{- fail "config.kafka.bootstrapServers is required" }}
{{- end }}
{{- if lt (int .Values.requestTopicPartitions) 1 }}
{{- fail "requestTopicPartitions must be at least 1" }}
{{- end }}
{{- if and (not .Values.keda.enabled) (not .Values.hpa.enabled) (gt (int .Values.replicaCount) (int .Values.requestTopicPartitions)) }}
{{- fail (printf "replicaCount (%d) exceeds requestTopicPartitions (%d): workers beyond the partition count sit idle" (int .Values.replicaCount) (int .Values.requestTopicPartitions)) }}
{{- end }}
{{- if and .Values.keda.enabled (gt (int .Values.keda.minReplicaCount) (int (include "veridoc.maxReplicas" .))) }}
{{- fail "keda.minReplicaCount exceeds the maximum (keda.maxReplicaCount capped at requestTopicPartitions)" }}
{{- end }}
{{- if and (not .Values.keda.enabled) .Values.hpa.enabled (gt (int .Values.hpa.minReplicas) (int (include "veridoc.maxReplicas" .))) }}
{{- fail "hpa.minReplicas exceeds the maximum (hpa.maxReplicas capped at requestTopicPartitions)" }}
{{- end }}
{{- if not (has .Values.keda.triggerType (list "kafka" "apache-kafka")) }}
{{- fail "keda.triggerType must be kafka or apache-kafka" }}
{{- end }}
{{- if .Values.serve.enabled }}
{{- $port := int .Values.serve.port }}
{{- if or (lt $port 1) (gt $port 65535) }}
{{- fail (printf "serve.port (%d) must be from 1 to 65535" $port) }}
{{- end }}
{{- $stop := int .Values.serve.preStopSleepSeconds }}
{{- if lt $stop 0 }}
{{- fail "serve.preStopSleepSeconds must be at least 0" }}
{{- end }}
{{- if lt (int .Values.serve.terminationGracePeriodSeconds) (add $stop 5) }}
{{- fail (printf "serve.terminationGracePeriodSeconds (%d) must be at least serve.preStopSleepSeconds + 5 (%d): after the pause serve lets the requests under way finish" (int .Values.serve.terminationGracePeriodSeconds) (add $stop 5)) }}
{{- end }}
{{- if lt (int .Values.serve.replicaCount) 1 }}
{{- fail "serve.replicaCount must be at least 1 (serve.enabled=false turns serve off)" }}
{{- end }}
{{- end }}
{{- end }}
