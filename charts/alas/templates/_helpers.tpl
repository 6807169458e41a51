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
      name: {{ .Values.s3.credentialsSecret }}
      key: accessKey
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.s3.credentialsSecret }}
      key: secretKey
- name: HOME
  value: /tmp
{{- end -}}
