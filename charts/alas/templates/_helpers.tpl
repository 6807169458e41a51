{{/* Names and labels shared by every template. */}}

{{- define "alas.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-qualified base name: "<release>-alas", or the release name when it already says alas. */}}
{{- define "alas.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "alas.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "alas.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "alas.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "alas.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: alas
{{- end -}}

{{/* Selector labels of one component: include "alas.selectorLabels" (list . "controller") */}}
{{- define "alas.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "alas.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{/*
Names of this release's objects. For a release called "alas" they are the names `alas render` writes into
the WorkflowTemplates (alas-store, alas-s3-credentials, alas-workflow, alas-plan, ...); any other release
gets its own, so two releases can share a namespace.
*/}}
{{- define "alas.storeConfigMap" -}}
{{- printf "%s-store" (include "alas.fullname" .) -}}
{{- end -}}

{{- define "alas.s3Secret" -}}
{{- default (printf "%s-s3-credentials" (include "alas.fullname" .)) .Values.s3.credentialsSecret -}}
{{- end -}}

{{- define "alas.tokenSecret" -}}
{{- default (printf "%s-controller-token" (include "alas.fullname" .)) .Values.controller.tokenSecret -}}
{{- end -}}

{{- define "alas.workflowServiceAccount" -}}
{{- default (printf "%s-workflow" (include "alas.fullname" .)) .Values.workflow.serviceAccount -}}
{{- end -}}

{{/* A rendered WorkflowTemplate's name in this release: include "alas.workflowTemplateName" (list . "alas-plan") */}}
{{- define "alas.workflowTemplateName" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%s" (include "alas.fullname" $root) (trimPrefix "alas-" (index . 1)) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "alas.planTemplate" -}}
{{- default (include "alas.workflowTemplateName" (list . "alas-plan")) .Values.operator.planTemplate -}}
{{- end -}}

{{- define "alas.benchTemplate" -}}
{{- default (include "alas.workflowTemplateName" (list . "alas-bench")) .Values.operator.benchTemplate -}}
{{- end -}}

{{- define "alas.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The S3 endpoint: the bundled MinIO unless an external store is configured. */}}
{{- define "alas.s3Endpoint" -}}
{{- if .Values.s3.endpoint -}}
{{- .Values.s3.endpoint -}}
{{- else -}}
{{- printf "http://%s-minio.%s.svc:%d" (include "alas.fullname" .) .Release.Namespace (int .Values.minio.port) -}}
{{- end -}}
{{- end -}}

{{- define "alas.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsUser }}
fsGroup: {{ .Values.securityContext.runAsUser }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "alas.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Environment every alas container gets: the store (S3) settings and credentials. */}}
{{- define "alas.storeEnv" -}}
- name: ALAS_STORE__KIND
  value: s3
- name: ALAS_STORE__S3_ENDPOINT
  value: {{ include "alas.s3Endpoint" . | quote }}
- name: ALAS_STORE__S3_BUCKET
  value: {{ .Values.s3.bucket | quote }}
- name: ALAS_STORE__S3_PREFIX
  value: {{ .Values.s3.prefix | quote }}
- name: ALAS_STORE__S3_REGION
  value: {{ .Values.s3.region | quote }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ include "alas.s3Secret" . }}
      key: accessKey
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "alas.s3Secret" . }}
      key: secretKey
- name: HOME
  value: /tmp
{{- end -}}


{{/*
A WorkflowTemplate from workflows/ (parsed), changed in place to carry this release's values:
include "alas.releaseWorkflowTemplate" (list . $doc). `alas render` writes the names of a release called
"alas" (alas_argo.engines.argo_templates.ArgoOptions: the store ConfigMap alas-store and the Secret
alas-s3-credentials, matched below; a test pins them); every container and script template runs the alas
image. Pod-wide settings (ServiceAccount, pull secrets, securityContext, podGC, ttlStrategy) sit on the
workflow spec, so they reach every pod, Argo's own init and wait containers and the exit handler included.
A fan-out's width (a map template's parallelism) is workflow.mapParallelism's, by the template's rendered name.
*/}}
{{- define "alas.releaseWorkflowTemplate" -}}
{{- $root := index . 0 -}}
{{- $doc := index . 1 -}}
{{- $meta := $doc.metadata -}}
{{- $parallelism := index ($root.Values.workflow.mapParallelism | default dict) $meta.name -}}
{{- $_ := set $meta "name" (include "alas.workflowTemplateName" (list $root $meta.name)) -}}
{{- $_ := set $meta "labels" (merge (include "alas.labels" $root | fromYaml) ($meta.labels | default dict)) -}}
{{- $spec := $doc.spec -}}
{{- $_ := set $spec "serviceAccountName" (include "alas.workflowServiceAccount" $root) -}}
{{- $_ := set $spec "securityContext" (include "alas.podSecurityContext" $root | fromYaml) -}}
{{- $_ := set $spec "podGC" $root.Values.workflow.podGC -}}
{{- $_ := set $spec "ttlStrategy" $root.Values.workflow.ttlStrategy -}}
{{- with $root.Values.imagePullSecrets -}}
{{- $_ := set $spec "imagePullSecrets" . -}}
{{- end -}}
{{- $secret := include "alas.s3Secret" $root -}}
{{- $store := include "alas.storeConfigMap" $root -}}
{{- range $t := $spec.templates -}}
{{- if and $parallelism (hasKey $t "parallelism") -}}
{{- $_ := set $t "parallelism" ($parallelism | int) -}}
{{- end -}}
{{- range $main := compact (list $t.container $t.script) -}}
{{- $_ := set $main "image" (include "alas.image" $root) -}}
{{- $_ := set $main "imagePullPolicy" $root.Values.image.pullPolicy -}}
{{- end -}}
{{- range $c := concat (compact (list $t.container $t.script)) ($t.initContainers | default list) ($t.sidecars | default list) -}}
{{- range $e := $c.env | default list -}}
{{- with $e.valueFrom -}}{{- with .secretKeyRef -}}
{{- if eq .name "alas-s3-credentials" -}}{{- $_ := set . "name" $secret -}}{{- end -}}
{{- end -}}{{- end -}}
{{- end -}}
{{- range $f := $c.envFrom | default list -}}
{{- with $f.configMapRef -}}
{{- if eq .name "alas-store" -}}{{- $_ := set . "name" $store -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
