{{/*
The chart name, overridable with nameOverride.
*/}}
{{- define "robotsd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified name of the release's objects (at most 63 characters, a DNS label).
*/}}
{{- define "robotsd.fullname" -}}
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

{{- define "robotsd.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "robotsd.labels" -}}
helm.sh/chart: {{ include "robotsd.chart" . }}
app.kubernetes.io/name: {{ include "robotsd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: robotsd
{{- end }}

{{/*
Selector labels of robotsd's pods. The component label keeps the helm test pod (component
"test") out of the Deployment's, the Service's and the PodDisruptionBudget's selectors.
*/}}
{{- define "robotsd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "robotsd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/*
The label that lets a pod through the NetworkPolicy when networkPolicy.ingress.from is set
(a label name has at most 63 characters).
*/}}
{{- define "robotsd.clientLabel" -}}
{{- include "robotsd.fullname" . | trunc 56 | trimSuffix "-" }}-client
{{- end }}

{{- define "robotsd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "robotsd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "robotsd.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
The port of a socket address "IP:port" or "[IPv6]:port".
*/}}
{{- define "robotsd.portOf" -}}
{{- splitList ":" . | last | int }}
{{- end }}

{{/*
The API's container port: the port of config.listen, robotsd's default 8080 when unset.
*/}}
{{- define "robotsd.httpPort" -}}
{{- include "robotsd.portOf" (.Values.config.listen | default "0.0.0.0:8080") }}
{{- end }}

{{/*
The admin listener's container port; empty when config.adminListen is unset.
*/}}
{{- define "robotsd.adminPort" -}}
{{- with .Values.config.adminListen }}
{{- include "robotsd.portOf" . }}
{{- end }}
{{- end }}

{{/*
The named container port of /livez, /readyz and /metrics.
*/}}
{{- define "robotsd.probePortName" -}}
{{- if .Values.config.adminListen }}admin{{ else }}http{{ end }}
{{- end }}

{{/*
The Service port in front of /readyz and /metrics.
*/}}
{{- define "robotsd.probeServicePort" -}}
{{- if .Values.config.adminListen }}{{ .Values.service.adminPort }}{{ else }}{{ .Values.service.port }}{{ end }}
{{- end }}

{{/*
Whole seconds (rounded up) of a humantime duration such as "25s", "1m 30s", "500ms" or
"30days": the syntax robotsd's duration flags take (values.schema.json checks it). Units:
https://docs.rs/humantime (nanos..years; a month is 30.44 days, a year 365.25 days).
*/}}
{{- define "robotsd.durationSeconds" -}}
{{- $units := dict
  "nanos" 0.000000001 "nsec" 0.000000001 "ns" 0.000000001
  "usec" 0.000001 "us" 0.000001 "µs" 0.000001
  "millis" 0.001 "msec" 0.001 "ms" 0.001
  "seconds" 1.0 "second" 1.0 "secs" 1.0 "sec" 1.0 "s" 1.0
  "minutes" 60.0 "minute" 60.0 "min" 60.0 "mins" 60.0 "m" 60.0
  "hours" 3600.0 "hour" 3600.0 "hr" 3600.0 "hrs" 3600.0 "h" 3600.0
  "days" 86400.0 "day" 86400.0 "d" 86400.0
  "weeks" 604800.0 "week" 604800.0 "wk" 604800.0 "wks" 604800.0 "w" 604800.0
  "months" 2630016.0 "month" 2630016.0 "M" 2630016.0
  "years" 31557600.0 "year" 31557600.0 "yr" 31557600.0 "yrs" 31557600.0 "y" 31557600.0 }}
{{- $total := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?\\s*[a-zA-Zµ]+" (toString .) -1 }}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" . | float64 }}
{{- $unit := regexReplaceAll "^[0-9]+(\\.[0-9]+)?\\s*" . "" }}
{{- if not (hasKey $units $unit) }}
{{- fail (printf "unknown duration unit %q" $unit) }}
{{- end }}
{{- $total = addf $total (mulf $number (get $units $unit)) }}
{{- end }}
{{- ceil $total | int }}
{{- end }}

{{/*
terminationGracePeriodSeconds: as set, else preStop sleep + shutdown grace + margin.
*/}}
{{- define "robotsd.terminationGracePeriodSeconds" -}}
{{- if not (kindIs "invalid" .Values.terminationGracePeriodSeconds) }}
{{- .Values.terminationGracePeriodSeconds | int }}
{{- else }}
{{- $grace := include "robotsd.durationSeconds" (.Values.config.shutdownGrace | default "25s") | int }}
{{- add .Values.preStopSleepSeconds $grace .Values.terminationGraceMarginSeconds }}
{{- end }}
{{- end }}

{{/*
The ROBOTSD_* environment variables of the settings in config that are set; each flag's
variable is its name in capitals with "-" as "_". Lists are comma-joined (the variables of
--allow-cidr and --deny-cidr take comma-separated lists).
*/}}
{{- define "robotsd.configEnv" -}}
{{- $flags := list
  "listen" "admin-listen"
  "operator-contact" "fetch-user-agent" "connect-timeout" "fetch-timeout" "max-robots-bytes" "max-redirects" "proxy" "fetch-nice"
  "cache-capacity" "default-lifetime" "min-lifetime" "max-lifetime" "disallow-window"
  "last-copy-window" "retry-min" "retry-max"
  "allow-private-networks" "allow-cidr" "deny-cidr" "dns-server" "dns-cache-entries" "system-resolver"
  "max-url-bytes" "max-user-agent-bytes" "max-agents" "max-agent-names" "max-request-work"
  "max-batch" "max-body-bytes" "max-page-bytes" "request-timeout"
  "concurrency-limit" "batch-concurrency" "shutdown-grace"
  "max-connections" "header-read-timeout" "idle-timeout" "body-read-timeout" "max-header-bytes"
  "http2-max-streams" "max-body-bytes-in-flight"
  "log-format" "log-level" "access-log"
  "redis-url" "redis-password-file" "redis-ca-file" "redis-client-cert" "redis-client-key"
  "redis-cluster" "redis-sentinel" "redis-sentinel-master" "redis-sentinel-password-file"
  "redis-tls" "store-timeout" "store-lease"
  "store-sync-interval" "api-token-file" "percent-decoding" "no-ui"
  "default-crawl-delay" "max-crawl-delay" "max-pace-wait" "max-retry-after" "pace-capacity"
  "pace-guard" "pace-key" "fleet-index-offset"
  "rsl" "rsl-capacity" "tdmrep" "tdmrep-capacity" "wba-keys" "wba-agent" "wba-ttl"
  "wba-product-token" "challenge-as" }}
{{- $config := .Values.config }}
{{- if and $config.proxy $config.proxyFromSecret.name }}
{{- fail "config.proxy and config.proxyFromSecret.name are both set: choose one" }}
{{- end }}
{{- if not (or $config.operatorContact $config.fetchUserAgent) }}
{{- fail "config.operatorContact is required (or config.fetchUserAgent): an https:// URL or mailto: address where the owners of the sites robotsd fetches from can reach you" }}
{{- end }}
{{- if and $config.apiTokenFile $config.apiTokenFromSecret.name }}
{{- fail "config.apiTokenFile and config.apiTokenFromSecret.name are both set: choose one" }}
{{- end }}
{{- if and $config.wbaKeys $config.wbaKeysFromSecret.name }}
{{- fail "config.wbaKeys and config.wbaKeysFromSecret.name are both set: choose one" }}
{{- end }}
{{- if and (or $config.wbaKeys $config.wbaKeysFromSecret.name) (not $config.wbaAgent) }}
{{- fail "config.wbaAgent is required with Web Bot Auth keys: the https URL of the fleet's key directory" }}
{{- end }}
{{- if and $config.systemResolver $config.dnsServer }}
{{- fail "config.systemResolver and config.dnsServer are both set: choose one" }}
{{- end }}
{{- if and $config.redisUrl $config.redisUrlFromSecret.name }}
{{- fail "config.redisUrl and config.redisUrlFromSecret.name are both set: choose one" }}
{{- end }}
{{- if and $config.redisSentinel (or $config.redisUrl $config.redisUrlFromSecret.name) }}
{{- fail "config.redisSentinel and a Redis URL (config.redisUrl or redisUrlFromSecret) are both set: choose one" }}
{{- end }}
{{- if and $config.redisSentinel (not $config.redisSentinelMaster) }}
{{- fail "config.redisSentinelMaster is required with config.redisSentinel: the name the sentinels monitor the master under" }}
{{- end }}
{{- range $flag := $flags }}
{{- $key := $flag | replace "-" "_" | camelcase | untitle }}
{{- $env := printf "ROBOTSD_%s" ($flag | upper | replace "-" "_") }}
{{- $value := index $config $key }}
{{- if kindIs "slice" $value }}
{{- if $value }}
- name: {{ $env }}
  value: {{ join "," $value | quote }}
{{- end }}
{{- else if kindIs "float64" $value }}
- name: {{ $env }}
  value: {{ int64 $value | toString | quote }}
{{- else if not (kindIs "invalid" $value) }}
- name: {{ $env }}
  value: {{ toString $value | quote }}
{{- end }}
{{- end }}
{{- with $config.proxyFromSecret.name }}
- name: ROBOTSD_PROXY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $config.proxyFromSecret.key }}
{{- end }}
{{- with $config.apiTokenFromSecret.name }}
- name: ROBOTSD_API_TOKEN_FILE
  value: {{ printf "/etc/robotsd/api-tokens/%s" $config.apiTokenFromSecret.key | quote }}
{{- end }}
{{- with $config.wbaKeysFromSecret.name }}
- name: ROBOTSD_WBA_KEYS
  value: {{ printf "/etc/robotsd/wba-keys/%s" $config.wbaKeysFromSecret.key | quote }}
{{- end }}
{{- with $config.redisUrlFromSecret.name }}
- name: ROBOTSD_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $config.redisUrlFromSecret.key }}
{{- end }}
{{- end }}

{{/*
The most pods this release runs at once: replicaCount, or autoscaling.maxReplicas with the
autoscaler on (at least 1), and, for a Deployment that rolls its pods, the rollout's surge
(strategy.rollingUpdate.maxSurge, a number or a percentage rounded up as Kubernetes does; 25%
when unset), since old and new pods pace alone side by side while it lasts. A StatefulSet
replaces its pods one at a time, and Recreate stops the old ones first: no surge.
*/}}
{{- define "robotsd.maxPods" -}}
{{- $pods := .Values.replicaCount | int }}
{{- if .Values.autoscaling.enabled }}
{{- $pods = .Values.autoscaling.maxReplicas | int }}
{{- end }}
{{- $pods = max 1 $pods }}
{{- $surge := 0 }}
{{- $strategy := .Values.strategy | default dict }}
{{- if and (ne .Values.workload.kind "StatefulSet") (ne ($strategy.type | default "RollingUpdate") "Recreate") }}
{{- $given := dig "rollingUpdate" "maxSurge" "25%" $strategy | toString }}
{{- if hasSuffix "%" $given }}
{{- $surge = div (add (mul $pods (trimSuffix "%" $given | int)) 99) 100 }}
{{- else }}
{{- $surge = $given | int }}
{{- end }}
{{- end }}
{{- add $pods $surge }}
{{- end }}

{{/*
--fleet-size and --fleet-index. Whenever a replica decides pacing slots alone (no store, or the
store down) it keeps 1/fleet-size of a site's rate, so the size must be at least the pods that
can do so at once: config.fleetSize, else the most pods this release runs at once. A StatefulSet pod's
ordinal (the apps.kubernetes.io/pod-index label, set from Kubernetes 1.28) is its index, its own
turn within each interval; a Deployment's pods have none, and robotsd then keeps the rate
without the turns.
*/}}
{{- define "robotsd.fleetEnv" -}}
{{- $pods := include "robotsd.maxPods" . | int }}
{{- $size := $pods }}
{{- if not (kindIs "invalid" .Values.config.fleetSize) }}
{{- $size = .Values.config.fleetSize | int }}
{{- if lt $size $pods }}
{{- fail (printf "config.fleetSize (%d) is below the %d pods this release can run at once (replicaCount, or autoscaling.maxReplicas, and a rollout's surge): while they pace alone, a site would see more than its crawl-delay allows. Leave it null, or raise it" $size $pods) }}
{{- end }}
{{- end }}
{{- $offset := .Values.config.fleetIndexOffset | default 0 | int }}
{{- if and (eq .Values.workload.kind "StatefulSet") (gt $offset 0) (lt $size (add $offset $pods)) }}
{{- fail (printf "config.fleetIndexOffset (%d) and this release's %d pods need config.fleetSize of at least %d: set it to every release's pods together, the same in each release" $offset $pods (add $offset $pods)) }}
{{- end }}
- name: ROBOTSD_FLEET_SIZE
  value: {{ $size | toString | quote }}
{{- if eq .Values.workload.kind "StatefulSet" }}
- name: ROBOTSD_FLEET_INDEX
  valueFrom:
    fieldRef:
      fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
{{- end }}
{{- end }}

{{/*
The ports of the shared store robotsd's egress must reach, as a JSON list: networkPolicy's
storePorts if set, else the port of config.redisUrl (6379 if none), or with config.redisSentinel
each sentinel's port (26379 if none) and the master's 6379; none without a store. The URL of
redisUrlFromSecret is not the chart's to read: storePorts must say it.
*/}}
{{- define "robotsd.storePorts" -}}
{{- $config := .Values.config }}
{{- $ports := list }}
{{- if .Values.networkPolicy.egress.storePorts }}
{{- $ports = .Values.networkPolicy.egress.storePorts }}
{{- else if $config.redisUrl }}
{{- $port := regexFind ":[0-9]+$" (urlParse $config.redisUrl).host | trimPrefix ":" | default "6379" }}
{{- $ports = list ($port | int) }}
{{- else if $config.redisSentinel }}
{{- range $config.redisSentinel }}
{{- $ports = append $ports (regexFind ":[0-9]+$" . | trimPrefix ":" | default "26379" | int) }}
{{- end }}
{{- $ports = append $ports 6379 }}
{{- else if $config.redisUrlFromSecret.name }}
{{- fail "networkPolicy.enabled with config.redisUrlFromSecret: set networkPolicy.egress.storePorts to the Redis port(s), which the chart cannot read from the Secret" }}
{{- end }}
{{- $ports | uniq | toJson }}
{{- end }}
