#!/usr/bin/env python3
"""Checks deploy/ (Dockerfile, Kubernetes manifests, KEDA, systemd, Grafana)
and scripts/create-topics.sh without a Docker engine or a cluster: every YAML
and JSON parses, each manifest has what its kind needs, and the pieces agree
with each other and with the code (config keys read by Sources/, the
observability port, drain times, topic names, metric names).

Run by `make test`. Needs PyYAML. Uses, when installed, kubernetes-validate
(schema check of the core kinds), promql-parser (PromQL syntax), shellcheck,
systemd-analyze and kubectl (kustomize build); says which it skipped.

  python3 scripts/check-deploy.py [--root REPO]

Prints `FAIL <file>: <problem>` for each problem and ends with
`deploy checks: N passed, M failed`; exits 1 when anything failed."""
import fnmatch, glob, json, os, re, shutil, subprocess, sys, tempfile

try:
    import yaml
except ImportError:
    print("check-deploy: python3 PyYAML missing (pip install pyyaml)", file=sys.stderr)
    sys.exit(1)

# The agreed metric names (docs/metrics.md "Metrics, health and logs";
# Sources/PushWorker/Observability/MetricNames.swift). Histograms marked True.
AGREED_METRICS = {
    "pushfleet_messages_consumed_total": False, "pushfleet_notifications_sent_total": False,
    "pushfleet_provider_request_seconds": True, "pushfleet_created_to_accepted_seconds": True,
    "pushfleet_enqueued_to_accepted_seconds": True,
    "pushfleet_in_flight": False, "pushfleet_retries_total": False,
    "pushfleet_dead_letters_total": False, "pushfleet_suppressed_duplicates_total": False,
    "pushfleet_consumer_lag": False, "pushfleet_circuit_state": False,
    "pushfleet_token_refreshes_total": False, "pushfleet_resent_without_status_total": False,
    "pushfleet_rate_limited_total": False, "pushfleet_receipts_total": False,
    "pushfleet_batch_commit_seconds": True, "pushfleet_partitions_assigned": False,
    "pushfleet_thread_cpu_seconds_total": False, "pushfleet_build_info": False,
    "pushfleet_lane_lag": False, "pushfleet_parked_messages_total": False, "pushfleet_quota_share": False,
    "pushfleet_unfinished_deliveries": False, "pushfleet_oldest_unfinished_seconds": False,
    # The standard process metrics of Prometheus client libraries, exported too.
    "process_cpu_seconds_total": False, "process_resident_memory_bytes": False,
}
# What the dashboard must show: one panel or more for each.
DASHBOARD_MUST_SHOW = [
    "pushfleet_notifications_sent_total", "pushfleet_created_to_accepted_seconds",
    "pushfleet_enqueued_to_accepted_seconds",
    "pushfleet_provider_request_seconds", "pushfleet_in_flight", "pushfleet_retries_total",
    "pushfleet_dead_letters_total", "pushfleet_suppressed_duplicates_total",
    "pushfleet_consumer_lag", "pushfleet_circuit_state", "pushfleet_token_refreshes_total",
    "pushfleet_resent_without_status_total", "pushfleet_rate_limited_total", "pushfleet_receipts_total",
    "pushfleet_lane_lag", "pushfleet_parked_messages_total", "pushfleet_unfinished_deliveries",
    "pushfleet_oldest_unfinished_seconds",
]
# Worker shutdown budget when the config does not say: drain, revoke drain, close watchdog.
DEFAULT_DRAIN, DEFAULT_REVOKE, CLOSE_WATCHDOG = 20, 10, 10
SECRETS_DIR = "/etc/pushfleet/secrets"
# The per-app keys that name a secret file (each provider's credentials).
SECRET_FILE_KEYS = (("apns", "key_path"), ("fcm", "service_account_path"),
                    ("webpush", "vapid_private_key_path"), ("hms", "client_secret_path"))
CORE_API_GROUPS = ("v1", "apps/", "batch/", "policy/")


class Checker:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.failures = []
        self.passed = 0
        self.skipped = []

    def rel(self, path):
        return os.path.relpath(path, self.root)

    def check(self, ok, path, problem):
        """Counts one assertion; records `problem` against `path` when it fails."""
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"FAIL {self.rel(path) if os.path.isabs(path) else path}: {problem}")
        return ok

    def path(self, *parts):
        return os.path.join(self.root, *parts)


# ------------------------------------------------------------------ loading
def load_yaml_documents(c):
    """Every YAML document under deploy/, as (path, document)."""
    docs = []
    files = sorted(glob.glob(c.path("deploy", "**", "*.yaml"), recursive=True)
                   + glob.glob(c.path("deploy", "**", "*.yml"), recursive=True))
    c.check(files, c.path("deploy"), "no YAML files found")
    for f in files:
        try:
            loaded = [d for d in yaml.safe_load_all(open(f)) if d is not None]
        except yaml.YAMLError as e:
            c.check(False, f, f"YAML does not parse: {e}")
            continue
        c.check(loaded, f, "no YAML document in the file")
        for d in loaded:
            if not c.check(isinstance(d, dict), f, "a document is not a mapping"):
                continue
            c.check(d.get("apiVersion"), f, f"document without apiVersion ({d.get('kind')})")
            c.check(d.get("kind"), f, "document without kind")
            if d.get("kind") != "Kustomization":
                c.check((d.get("metadata") or {}).get("name"), f, f"{d.get('kind')} without metadata.name")
            docs.append((f, d))
    return docs


def load_json_files(c):
    out = {}
    for f in sorted(glob.glob(c.path("deploy", "**", "*.json"), recursive=True)):
        try:
            out[f] = json.load(open(f))
            c.check(True, f, "")
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            c.check(False, f, f"JSON does not parse: {e}")
    return out


def of_kind(docs, kind):
    return [(f, d) for f, d in docs if d.get("kind") == kind]


# ------------------------------------------------------------ configuration
def known_config_keys(c):
    """Key names that the configuration code reads: the string literals passed
    straight to a reader (`r.int("batch_size")`, `section(root, "logging")`,
    `json["tiers"]`) in the Swift files that parse the config. Labelled
    arguments (`ConfigurationError(key: "worker.batch_size")`) do not count, so
    renaming a key in the code makes a stale manifest fail."""
    files = sorted(set(glob.glob(c.path("Sources", "PushWorker", "**", "*Config*.swift"), recursive=True)
                       + glob.glob(c.path("Sources", "pushfleet", "**", "*Config*.swift"), recursive=True)))
    keys = set()
    for f in files:
        keys.update(re.findall(r'[(\[,]\s*"([a-z_][a-z0-9_]*)"', open(f).read()))
    c.check(files and "bootstrap_servers" in keys, c.path("Sources", "PushWorker"),
            "cannot find the configuration keys (no *Config*.swift reading bootstrap_servers)")
    return keys


def config_keys(value, path=""):
    """(dotted path, key) of every key in a worker config, leaving out the
    free-form names: librdkafka properties and app names."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            full = f"{path}{k}"
            out.append((full, k))
            if path == "" and k == "apps" and isinstance(v, dict):
                for app, app_value in v.items():
                    out.extend(config_keys(app_value, f"apps.{app}."))
            elif not (path == "kafka." and k == "properties"):
                out.extend(config_keys(v, full + "."))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.extend(config_keys(item, f"{path[:-1]}[{i}]."))
    return out


def check_config(c, docs):
    """The ConfigMap's config.json: parses, equals deploy/config/worker.json,
    every key is one the code reads. Returns the config (or {})."""
    example_path = c.path("deploy", "config", "worker.json")
    example = None
    if c.check(os.path.exists(example_path), example_path, "missing (the VM/systemd config example)"):
        try:
            example = json.load(open(example_path))
        except json.JSONDecodeError:
            example = None  # reported by load_json_files
    maps = [(f, d) for f, d in of_kind(docs, "ConfigMap") if "config.json" in (d.get("data") or {})]
    if not c.check(len(maps) == 1, c.path("deploy", "kubernetes"), "expected one ConfigMap with data.config.json"):
        return example or {}, None
    f, cm = maps[0]
    try:
        config = json.loads(cm["data"]["config.json"])
    except json.JSONDecodeError as e:
        c.check(False, f, f"data.config.json is not valid JSON: {e}")
        return example or {}, cm
    if example is not None:
        c.check(config == example, f, "data.config.json differs from deploy/config/worker.json")
    known = known_config_keys(c)
    # The example shows every section the worker reads, so an operator sees each one.
    source = open(c.path("Sources", "PushWorker", "WorkerConfiguration.swift")).read()
    top = source[:source.find('r.object("apps")') + len('r.object("apps")')]  # the apps' own sections come after
    sections = re.findall(r'if let \w+ = r\.object\("([a-z_]+)"\)', top)
    c.check("kafka" in sections and "registry" in sections, example_path, "cannot find the sections WorkerConfiguration.swift reads")
    for section in sections:
        c.check(section in (example or {}), example_path, f"does not show the {section}.* section the worker reads")
    for source, cfg in ((f, config), (example_path, example or {})):
        for dotted, key in config_keys(cfg):
            c.check(key in known, source, f"config key {dotted} is not read by the worker (no \"{key}\" in Sources/*Config*.swift)")
    listen = (config.get("observability") or {}).get("listen", "0.0.0.0:9464")
    c.check(re.fullmatch(r".*:\d{1,5}", str(listen)), f, f"observability.listen {listen!r} is not host:port")
    for app, app_cfg in (config.get("apps") or {}).items():
        for section, key in SECRET_FILE_KEYS:
            p = ((app_cfg or {}).get(section) or {}).get(key)
            if p is not None:
                c.check(str(p).startswith(SECRETS_DIR + "/"), f, f"apps.{app}.{section}.{key} {p} is not under {SECRETS_DIR}/")
    return config, cm


def observability_port(config):
    listen = str((config.get("observability") or {}).get("listen", "0.0.0.0:9464"))
    m = re.search(r":(\d+)$", listen)
    return int(m.group(1)) if m else None


def shutdown_budget(config):
    w = config.get("worker") or {}
    return int(w.get("drain_timeout_seconds", DEFAULT_DRAIN)) + int(w.get("revoke_drain_timeout_seconds", DEFAULT_REVOKE)) + CLOSE_WATCHDOG


# --------------------------------------------------------------- kubernetes
def pod_spec(doc):
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return ((spec.get("template") or {}).get("spec")) or {}


def quantity_mib(q):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?", str(q))
    if not m:
        return None
    scale = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "K": 1e3 / 2**20, "M": 1e6 / 2**20, "G": 1e9 / 2**20, None: 1 / 2**20}
    return float(m.group(1)) * scale[m.group(2)]


def check_pod_security(c, f, doc):
    spec = pod_spec(doc)
    pod_sc = spec.get("securityContext") or {}
    for container in spec.get("containers") or []:
        sc = container.get("securityContext") or {}
        name = f"{doc['kind']} {doc['metadata']['name']} container {container.get('name')}"
        c.check(sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True, f, f"{name}: runAsNonRoot is not true")
        c.check(sc.get("runAsUser", pod_sc.get("runAsUser", 0)) != 0, f, f"{name}: runs as uid 0")
        c.check(sc.get("readOnlyRootFilesystem") is True, f, f"{name}: readOnlyRootFilesystem is not true")
        c.check(sc.get("allowPrivilegeEscalation") is False, f, f"{name}: allowPrivilegeEscalation is not false")
        c.check("ALL" in ((sc.get("capabilities") or {}).get("drop") or []), f, f"{name}: capabilities.drop lacks ALL")
        res = container.get("resources") or {}
        c.check(((res.get("requests") or {}).get("memory")) and ((res.get("limits") or {}).get("memory")), f,
                f"{name}: resources.requests.memory and resources.limits.memory are required")


def secret_keys(docs):
    keys, names = set(), set()
    for _, d in of_kind(docs, "Secret"):
        names.add(d["metadata"]["name"])
        keys.update((d.get("stringData") or {}).keys())
        keys.update((d.get("data") or {}).keys())
    return names, keys


def check_env_refs(c, f, doc, secret_names, secrets, config_maps):
    for container in pod_spec(doc).get("containers") or []:
        for env in container.get("env") or []:
            ref = (env.get("valueFrom") or {}).get("secretKeyRef")
            if ref:
                c.check(ref.get("name") in secret_names and ref.get("key") in secrets, f,
                        f"{doc['kind']} {doc['metadata']['name']}: env {env.get('name')} refers to secret "
                        f"{ref.get('name')}/{ref.get('key')}, which secret.example.yaml does not define")
            ref = (env.get("valueFrom") or {}).get("configMapKeyRef")
            if ref:
                c.check(ref.get("name") in config_maps, f, f"env {env.get('name')} refers to unknown ConfigMap {ref.get('name')}")


def check_deployment(c, docs, config, cm):
    deployments = of_kind(docs, "Deployment")
    if not c.check(len(deployments) == 1, c.path("deploy", "kubernetes"), f"expected one Deployment, found {len(deployments)}"):
        return None
    f, dep = deployments[0]
    spec = dep.get("spec") or {}
    template = spec.get("template") or {}
    pod = template.get("spec") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    c.check(selector and all(labels.get(k) == v for k, v in selector.items()), f, "spec.selector.matchLabels do not match the pod template labels")
    c.check(isinstance(spec.get("replicas"), int) and spec["replicas"] >= 1, f, "spec.replicas must be a positive integer")
    budget = shutdown_budget(config)
    grace = pod.get("terminationGracePeriodSeconds")
    c.check(isinstance(grace, int) and grace > budget, f,
            f"terminationGracePeriodSeconds {grace} is not above the worker's shutdown budget {budget} s (drain + revoke drain + close watchdog)")
    containers = pod.get("containers") or []
    if not c.check(containers, f, "no containers"):
        return dep
    worker = containers[0]
    port = observability_port(config)
    ports = {p.get("name"): p.get("containerPort") for p in worker.get("ports") or []}
    c.check(port in ports.values(), f, f"no containerPort {port} (observability.listen of the ConfigMap)")
    for probe_name, path in (("livenessProbe", "/health/live"), ("readinessProbe", "/health/ready")):
        probe = worker.get(probe_name)
        if not c.check(probe and probe.get("httpGet"), f, f"{probe_name} with httpGet is required"):
            continue
        get = probe["httpGet"]
        c.check(get.get("path") == path, f, f"{probe_name} path is {get.get('path')!r}, must be {path}")
        target = ports.get(get.get("port"), get.get("port"))
        c.check(target == port, f, f"{probe_name} port {get.get('port')!r} is not the observability port {port}")
    startup = (worker.get("startupProbe") or {}).get("httpGet")
    if startup:
        c.check(ports.get(startup.get("port"), startup.get("port")) == port and startup.get("path") == "/health/live",
                f, "startupProbe must probe /health/live on the observability port")
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    c.check(annotations.get("prometheus.io/scrape") == "true", f, "pod annotation prometheus.io/scrape: \"true\" missing")
    c.check(str(annotations.get("prometheus.io/port")) == str(port), f, f"pod annotation prometheus.io/port is not {port}")
    c.check(annotations.get("prometheus.io/path", "/metrics") == "/metrics", f, "prometheus.io/path must be /metrics")
    request = quantity_mib(((worker.get("resources") or {}).get("requests") or {}).get("memory", "0"))
    limit = quantity_mib(((worker.get("resources") or {}).get("limits") or {}).get("memory", "0"))
    c.check(request and request >= 150 and limit and limit >= request, f,
            "worker memory: requests must cover the ~150 MB RSS target and limits must be >= requests")
    args = worker.get("args") or []
    c.check(args[:1] == ["worker"] and "--config" in args, f, "worker container args must be worker --config PATH")
    config_path = args[args.index("--config") + 1] if "--config" in args[:-1] else None
    mounts = {m.get("mountPath"): m for m in worker.get("volumeMounts") or []}
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    cm_name = (cm or {}).get("metadata", {}).get("name")
    config_mounted = False
    for mount_path, m in mounts.items():
        source = (volumes.get(m.get("name")) or {}).get("configMap") or {}
        if source.get("name") == cm_name:
            config_mounted = mount_path == config_path or (config_path or "").startswith(mount_path.rstrip("/") + "/")
    c.check(config_mounted, f, f"--config {config_path} is not a mount of ConfigMap {cm_name}")
    secret_names, secrets = secret_keys(docs)
    secret_mount = mounts.get(SECRETS_DIR)
    c.check(secret_mount and ((volumes.get(secret_mount.get("name")) or {}).get("secret") or {}).get("secretName") in secret_names,
            f, f"the Secret is not mounted at {SECRETS_DIR}")
    for app, app_cfg in (config.get("apps") or {}).items():
        for section, key in SECRET_FILE_KEYS:
            p = ((app_cfg or {}).get(section) or {}).get(key)
            if p and str(p).startswith(SECRETS_DIR + "/"):
                c.check(os.path.basename(p) in secrets, c.path("deploy", "kubernetes", "secret.example.yaml"),
                        f"no key {os.path.basename(p)} for apps.{app}.{section}.{key}")
    check_pod_security(c, f, dep)
    cms = {d["metadata"]["name"] for _, d in of_kind(docs, "ConfigMap")}
    for ff, d in docs:
        if d.get("kind") in ("Deployment", "Job", "CronJob"):
            check_env_refs(c, ff, d, secret_names, secrets, cms)
    return dep


def check_secret_example(c, docs):
    examples = [(f, d) for f, d in of_kind(docs, "Secret") if f.endswith("secret.example.yaml")]
    if not c.check(examples, c.path("deploy", "kubernetes", "secret.example.yaml"), "missing Secret example"):
        return
    for f, d in examples:
        values = list((d.get("stringData") or {}).values())
        c.check(values and all("REPLACE_ME" in str(v) for v in values), f, "every stringData value must carry the REPLACE_ME placeholder marker")
        c.check(any(k.endswith(".p8") for k in d.get("stringData") or {}), f, "no APNs .p8 key file")
        c.check(any(k.endswith(".json") for k in d.get("stringData") or {}), f, "no FCM service-account JSON file")


def check_jobs(c, docs, dep):
    image = (((dep or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0]).get("image")
    jobs = [(f, d) for f, d in of_kind(docs, "Job") if (pod_spec(d).get("containers") or [{}])[0].get("args", [])[:1] == ["migrate"]]
    c.check(len(jobs) == 1, c.path("deploy", "kubernetes"), "expected one Job running `pushfleet migrate`")
    crons = [(f, d) for f, d in of_kind(docs, "CronJob") if (pod_spec(d).get("containers") or [{}])[0].get("args", [])[:1] == ["maintain"]]
    c.check(len(crons) == 1, c.path("deploy", "kubernetes"), "expected one CronJob running `pushfleet maintain`")
    for f, d in crons:
        args = pod_spec(d)["containers"][0].get("args", [])
        c.check("--days-ahead" in args and "--retention-days" in args, f, "maintain needs --days-ahead and --retention-days")
        c.check(len(str((d.get("spec") or {}).get("schedule", "")).split()) == 5, f, "schedule is not a five-field cron expression")
        c.check((d.get("spec") or {}).get("concurrencyPolicy") == "Forbid", f, "concurrencyPolicy should be Forbid")
    for f, d in jobs + crons:
        c.check(pod_spec(d).get("restartPolicy") in ("Never", "OnFailure"), f, "restartPolicy must be Never or OnFailure")
        c.check(pod_spec(d)["containers"][0].get("image") == image, f, f"image differs from the Deployment's ({image})")
        check_pod_security(c, f, d)


def check_pdb(c, docs, dep):
    pdbs = of_kind(docs, "PodDisruptionBudget")
    if not c.check(len(pdbs) == 1, c.path("deploy", "kubernetes"), "expected one PodDisruptionBudget"):
        return
    f, pdb = pdbs[0]
    spec = pdb.get("spec") or {}
    c.check(spec.get("maxUnavailable") == 1, f, "maxUnavailable must be 1")
    selector = (spec.get("selector") or {}).get("matchLabels")
    c.check(dep and selector == ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels"), f, "selector differs from the Deployment's")


def check_keda(c, docs, dep, config):
    objs = of_kind(docs, "ScaledObject")
    if not c.check(len(objs) == 1, c.path("deploy", "kubernetes", "keda-scaledobject.yaml"), "expected one KEDA ScaledObject"):
        return
    f, so = objs[0]
    spec = so.get("spec") or {}
    c.check(so.get("apiVersion", "").startswith("keda.sh/"), f, "apiVersion must be keda.sh/v1alpha1")
    c.check(dep and (spec.get("scaleTargetRef") or {}).get("name") == dep["metadata"]["name"], f, "scaleTargetRef.name is not the Deployment")
    lo, hi = spec.get("minReplicaCount"), spec.get("maxReplicaCount")
    c.check(isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi, f, "need 1 <= minReplicaCount <= maxReplicaCount")
    kafka = config.get("kafka") or {}
    prefix = kafka.get("topic_prefix", "push")
    group = kafka.get("group_id", "pushfleet")
    # One trigger per lane: each lane's intake in that lane's consumer group.
    lanes = {f"{prefix}.notifications": group, f"{prefix}.notifications.bulk": kafka.get("bulk_group_id", group + ".bulk")}
    triggers = spec.get("triggers") or []
    c.check(triggers and all(t.get("type") == "kafka" for t in triggers), f, "triggers must all be of type kafka")
    seen = [(t.get("metadata") or {}).get("topic") for t in triggers]
    c.check(sorted(seen) == sorted(lanes), f, f"triggers watch {seen}: they must watch each lane's intake, {sorted(lanes)}")
    for t in triggers:
        meta = t.get("metadata") or {}
        topic = meta.get("topic")
        c.check(topic in lanes, f, f"trigger topic is {topic!r}: it must be a lane's intake (retry and parked lag is deliberate)")
        c.check(meta.get("consumerGroup") == lanes.get(topic), f,
                f"trigger on {topic} watches group {meta.get('consumerGroup')!r}, not that lane's group {lanes.get(topic)!r}")
        c.check(meta.get("bootstrapServers") == kafka.get("bootstrap_servers"), f, "trigger bootstrapServers differ from kafka.bootstrap_servers")
        c.check(re.fullmatch(r"[1-9]\d*", str(meta.get("lagThreshold", ""))), f, "lagThreshold must be a positive integer (as a string)")


def check_kustomization(c, docs):
    base = c.path("deploy", "kubernetes")
    k = [d for f, d in docs if d.get("kind") == "Kustomization"]
    kpath = os.path.join(base, "kustomization.yaml")
    if not c.check(len(k) == 1, kpath, "missing kustomization.yaml"):
        return
    listed = k[0].get("resources") or []
    for r in listed:
        c.check(os.path.exists(os.path.join(base, r)), kpath, f"resource {r} does not exist")
    for f in sorted(glob.glob(os.path.join(base, "*.yaml"))):
        name = os.path.basename(f)
        if name in ("kustomization.yaml", "secret.example.yaml", "keda-scaledobject.yaml"):
            continue
        c.check(name in listed, kpath, f"{name} is not listed in resources")
    c.check("secret.example.yaml" not in listed, kpath, "must not list secret.example.yaml (placeholders would overwrite the real Secret)")
    kubectl = shutil.which("kubectl")
    if kubectl:
        r = subprocess.run([kubectl, "kustomize", base], capture_output=True, text=True, timeout=60)
        c.check(r.returncode == 0, kpath, f"kubectl kustomize failed: {r.stderr.strip()[:300]}")
    else:
        c.skipped.append("kubectl kustomize (kubectl not installed)")


def check_schemas(c, docs):
    try:
        import kubernetes_validate
    except ImportError:
        c.skipped.append("Kubernetes schema validation (pip install kubernetes-validate)")
        return
    for f, d in docs:
        if not str(d.get("apiVersion", "")).startswith(CORE_API_GROUPS) or d.get("kind") == "Kustomization":
            continue
        for version in ("1.28.0", kubernetes_validate.latest_version()):
            try:
                kubernetes_validate.validate(d, version, strict=True)
                c.check(True, f, "")
            except kubernetes_validate.ValidationError as e:
                c.check(False, f, f"{d.get('kind')} {d['metadata'].get('name')} fails the Kubernetes {version} schema: {e.message} at {'.'.join(map(str, e.path))}")
            except kubernetes_validate.SchemaNotFoundError as e:
                c.check(False, f, f"no Kubernetes {version} schema for {d.get('kind')} {d.get('apiVersion')}: {e}")


# ------------------------------------------------------------------ grafana
def check_dashboard(c, jsons):
    f = c.path("deploy", "grafana", "pushfleet-dashboard.json")
    dash = jsons.get(f)
    if not c.check(dash is not None, f, "missing or not valid JSON"):
        return
    c.check(isinstance(dash.get("schemaVersion"), int) and dash["schemaVersion"] >= 36, f, "schemaVersion must be >= 36")
    variables = {v.get("name"): v for v in (dash.get("templating") or {}).get("list") or []}
    c.check((variables.get("DS_PROMETHEUS") or {}).get("type") == "datasource", f, "datasource variable DS_PROMETHEUS missing")
    for name in ("app", "provider"):
        c.check(name in variables, f, f"template variable {name} missing")
    source_names = set()
    names_file = c.path("Sources", "PushWorker", "Observability", "MetricNames.swift")
    if os.path.exists(names_file):
        source_names = set(re.findall(r'"((?:pushfleet|process)_[a-z0-9_]+)"', open(names_file).read()))
    try:
        import promql_parser
    except ImportError:
        promql_parser = None
        c.skipped.append("PromQL syntax (pip install promql-parser)")
    exprs = []
    for v in variables.values():
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if v.get("type") == "query" and q:
            exprs.append((f"variable {v.get('name')}", q, False))
    ids = []
    for panel in dash.get("panels") or []:
        ids.append(panel.get("id"))
        if panel.get("type") == "row":
            continue
        title = panel.get("title")
        c.check((panel.get("datasource") or {}).get("uid") == "${DS_PROMETHEUS}", f, f"panel {title!r}: datasource is not ${{DS_PROMETHEUS}}")
        grid = panel.get("gridPos") or {}
        c.check(grid.get("x", 0) + grid.get("w", 0) <= 24 and grid.get("w", 0) > 0, f, f"panel {title!r}: gridPos outside 24 columns")
        targets = panel.get("targets") or []
        c.check(targets, f, f"panel {title!r} has no query")
        for t in targets:
            exprs.append((f"panel {title!r}", t.get("expr", ""), True))
    c.check(len(ids) == len(set(ids)), f, "panel ids are not unique")
    used = set()
    for where, expr, promql in exprs:
        names = re.findall(r"\b((?:pushfleet|process)_[a-z0-9_]+)", expr)
        c.check(names, f, f"{where}: expression uses no pushfleet_ or process_ metric: {expr}")
        c.check(not re.search(r"\bpush[a-z]*_(?<!pushfleet_)", expr), f, f"{where}: misspelt metric prefix in {expr}")
        for name in names:
            base = re.sub(r"_(bucket|sum|count)$", "", name) if name not in AGREED_METRICS else name
            ok = c.check(base in AGREED_METRICS, f, f"{where}: {name} is not an agreed metric name")
            if ok and base != name:
                c.check(AGREED_METRICS[base], f, f"{where}: {name}: {base} is not a histogram")
            if ok and source_names:
                c.check(base in source_names, f, f"{where}: {base} is not in MetricNames.swift")
            used.add(base)
        if "_bucket" in expr:
            c.check("histogram_quantile" in expr and " le" in expr.replace("(le", "( le"), f, f"{where}: _bucket needs histogram_quantile(... by (le ...))")
        if promql and promql_parser:
            concrete = expr.replace("$__rate_interval", "5m").replace("$__range", "1h").replace("$app", "x").replace("$provider", "x")
            try:
                promql_parser.parse(concrete)
                c.check(True, f, "")
            except Exception as e:  # the parser raises plain ValueError/RuntimeError
                c.check(False, f, f"{where}: PromQL does not parse ({e}): {expr}")
    for name in DASHBOARD_MUST_SHOW:
        c.check(name in used, f, f"no panel shows {name}")


# ------------------------------------------------------- create-topics.sh
def check_create_topics(c, config):
    script = c.path("scripts", "create-topics.sh")
    if not c.check(os.path.exists(script), script, "missing"):
        return
    r = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    c.check(r.returncode == 0, script, f"bash -n: {r.stderr.strip()}")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    prefix = (config.get("kafka") or {}).get("topic_prefix", "push")
    for p, args in ((prefix, []), ("checkprefix", ["--prefix", "checkprefix"])):
        r = subprocess.run(["bash", script, "--dry-run", *args], capture_output=True, text=True, env=env, timeout=30)
        if not c.check(r.returncode == 0, script, f"--dry-run {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}"):
            continue
        lines = [l for l in r.stdout.splitlines() if l.strip()]
        topics = {}
        for line in lines:
            m = re.search(r"--topic (\S+)", line)
            if m:
                topics[m.group(1)] = line
        want = [f"{p}.notifications{lane}" for lane in ("", ".bulk")] \
            + [f"{p}.retry.{tier}{lane}" for tier in ("5s", "1m", "10m") for lane in ("", ".bulk")] \
            + [f"{p}.parked{lane}" for lane in ("", ".bulk")] + [f"{p}.dlq", f"{p}.receipts", f"{p}.devices"]
        for t in want:
            c.check(t in topics, script, f"--dry-run {' '.join(args)} does not create {t}")
        for t, line in topics.items():
            c.check("--if-not-exists" in line and "--bootstrap-server" in line, script, f"{t}: needs --bootstrap-server and --if-not-exists")
            if t.endswith(".devices"):
                c.check("cleanup.policy=compact" in line, script, f"{t} must be compacted (cleanup.policy=compact)")
            else:
                c.check("retention.ms=" in line, script, f"{t} has no retention.ms")
    tiers = [t.get("name") for t in (config.get("retry") or {}).get("tiers") or []]
    c.check(tiers in ([], ["5s", "1m", "10m"]), script, f"config retry tiers {tiers} differ from the script's default 5s 1m 10m")
    sc = shutil.which("shellcheck")
    if sc:
        r = subprocess.run([sc, script], capture_output=True, text=True)
        c.check(r.returncode == 0, script, f"shellcheck: {r.stdout.strip()[:500]}")
    else:
        c.skipped.append("shellcheck (apt-get install shellcheck)")


# ------------------------------------------------------------------ systemd
def parse_unit(text):
    sections, current = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line and current is not None:
            k, v = line.split("=", 1)
            current.setdefault(k.strip(), []).append(v.strip())
    return sections


def check_systemd(c, config, container_config_path):
    units = sorted(glob.glob(c.path("deploy", "systemd", "*.service")))
    c.check(units, c.path("deploy", "systemd"), "no systemd unit")
    budget = shutdown_budget(config)
    analyze = shutil.which("systemd-analyze")
    for f in units:
        u = parse_unit(open(f).read())
        for section in ("Unit", "Service", "Install"):
            c.check(section in u, f, f"no [{section}] section")
        s = u.get("Service", {})
        first = lambda k: (s.get(k) or [None])[-1]
        exec_start = first("ExecStart") or ""
        c.check(exec_start.startswith("/") and " worker" in exec_start, f, "ExecStart must run an absolute pushfleet path with `worker`")
        c.check(f"--config {container_config_path}" in exec_start, f, f"ExecStart --config differs from the image's {container_config_path}")
        c.check(first("Type") == "exec", f, "Type must be exec")
        c.check(first("KillSignal") == "SIGTERM", f, "KillSignal must be SIGTERM")
        c.check(first("User") not in (None, "root"), f, "User must be a non-root account")
        c.check(s.get("EnvironmentFile"), f, "no EnvironmentFile")
        c.check(first("Restart") == "on-failure", f, "Restart must be on-failure")
        m = re.fullmatch(r"(\d+)s?", first("TimeoutStopSec") or "")
        c.check(m and int(m.group(1)) > budget, f, f"TimeoutStopSec must be above the shutdown budget {budget} s")
        for key, value in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("PrivateTmp", "yes")):
            c.check(first(key) == value, f, f"{key}={value} missing")
        if analyze:
            with tempfile.TemporaryDirectory() as tmp:
                name = os.path.basename(f).replace("@.service", "@9464.service")
                copy = os.path.join(tmp, name)
                open(copy, "w").write(re.sub(r"^ExecStart=\S+", "ExecStart=/bin/true", open(f).read(), flags=re.M))
                r = subprocess.run([analyze, "verify", copy], capture_output=True, text=True, timeout=60)
                problems = [l for l in r.stderr.splitlines() if tmp in l or "Unknown" in l or "Failed" in l]
                c.check(r.returncode == 0 and not problems, f, "systemd-analyze verify: " + "; ".join(problems)[:500])
    if not analyze:
        c.skipped.append("systemd-analyze verify (systemd not installed)")
    env = c.path("deploy", "systemd", "pushfleet.env.example")
    if c.check(os.path.exists(env), env, "missing"):
        for line in open(env):
            line = line.strip()
            if line and not line.startswith("#"):
                c.check(re.fullmatch(r"PUSHFLEET_[A-Z_]+=\S*", line), env, f"not a PUSHFLEET_ variable assignment: {line}")


# --------------------------------------------------------------- Dockerfile
def dockerfile_instructions(text):
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def check_dockerfile(c, config, dep):
    f = c.path("deploy", "docker", "Dockerfile")
    if not c.check(os.path.exists(f), f, "missing"):
        return None
    ins = dockerfile_instructions(open(f).read())
    args = {}
    for word, rest in ins:
        if word == "ARG" and "=" in rest:
            k, v = rest.split("=", 1)
            args[k] = v
    froms = [re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest.split()[0]) for word, rest in ins if word == "FROM"]
    c.check(len(froms) >= 2, f, "must be multi-stage (a build and a runtime stage)")
    c.check(froms[:1] == ["swift:6.3-bookworm"], f, f"build stage must be FROM swift:6.3-bookworm, is {froms[:1]}")
    c.check(froms[-1:] == ["debian:bookworm-slim"], f, f"runtime stage must be FROM debian:bookworm-slim, is {froms[-1:]}")
    last_from = max(i for i, (w, _) in enumerate(ins) if w == "FROM")
    build, runtime = ins[:last_from], ins[last_from:]
    c.check(any(w == "RUN" and re.search(r"swift build -c release --product pushfleet --static-swift-stdlib", r) for w, r in build), f,
            "build stage must run `swift build -c release --product pushfleet --static-swift-stdlib`")
    runtime_run = " ".join(r for w, r in runtime if w == "RUN")
    for pkg in ("libpq5", "libcurl4", "libssl3", "ca-certificates"):
        c.check(re.search(rf"\b{re.escape(pkg)}\b", runtime_run), f, f"runtime stage does not install {pkg}")
    # librdkafka: not Debian's (bookworm's is 2.0.2) but the pinned current one the build
    # stage extracts (scripts/kafka-tools.sh), on LD_LIBRARY_PATH, checked by `pushfleet version`.
    c.check(not re.search(r"\blibrdkafka1\b", runtime_run), f, "runtime stage installs Debian's librdkafka1 (2.0.2 on bookworm)")
    c.check(any(w == "RUN" and "scripts/kafka-tools.sh extract /out/lib" in r for w, r in build), f,
            "build stage must extract the current librdkafka (`bash scripts/kafka-tools.sh extract /out/lib`)")
    c.check(any(w == "COPY" and "scripts/kafka-tools.sh" in r for w, r in build) and os.path.exists(c.path("scripts", "kafka-tools.sh")), f,
            "build stage must COPY scripts/kafka-tools.sh (and it must exist in the repository)")
    lib_copies = [r.split()[-1] for w, r in runtime if w == "COPY" and "--from=build" in r and r.split()[-2:-1] == ["/out/lib/librdkafka.so.1"]]
    ld_path = re.search(r"LD_LIBRARY_PATH=(\S+)", " ".join(r for w, r in runtime if w == "ENV"))
    c.check(lib_copies and ld_path and os.path.dirname(lib_copies[0]) == ld_path.group(1), f,
            "runtime stage must COPY /out/lib/librdkafka.so.1 into the directory LD_LIBRARY_PATH names")
    c.check(re.search(r"pushfleet version\b.*grep", runtime_run), f, "runtime stage must check the librdkafka `pushfleet version` loads")
    c.check(not re.search(r"\S+-dev\b", runtime_run), f, "runtime stage installs a -dev package")
    for src in ("Package.swift", "Sources", "Tests", "schemas"):
        copied = any(w == "COPY" and "--from" not in r and re.search(rf"(^|\s){re.escape(src)}(\s|$)", r) for w, r in build)
        c.check(copied and os.path.exists(c.path(src)), f, f"build stage must COPY {src} (and it must exist in the repository)")
    users = [r for w, r in runtime if w == "USER"]
    c.check(users and users[-1].split(":")[0] not in ("root", "0"), f, "runtime must switch to a non-root USER")
    port = observability_port(config)
    exposed = " ".join(r for w, r in runtime if w == "EXPOSE")
    c.check(re.search(rf"\b{port}\b", exposed), f, f"EXPOSE lacks the observability port {port}")
    entry = [r for w, r in runtime if w == "ENTRYPOINT"]
    cmd = [r for w, r in runtime if w == "CMD"]
    try:
        entry_json = json.loads(entry[-1]) if entry else None
        cmd_json = json.loads(cmd[-1]) if cmd else None
    except json.JSONDecodeError:
        entry_json = cmd_json = None
    c.check(isinstance(entry_json, list) and entry_json and entry_json[0].endswith("pushfleet"), f, "ENTRYPOINT must be the JSON form running pushfleet")
    c.check(isinstance(cmd_json, list) and cmd_json[:2] == ["worker", "--config"] and len(cmd_json) == 3, f, "CMD must be [\"worker\", \"--config\", PATH]")
    config_path = cmd_json[2] if isinstance(cmd_json, list) and len(cmd_json) == 3 else None
    dep_args = (((dep or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0]).get("args") or []
    if dep and "--config" in dep_args[:-1]:
        c.check(dep_args[dep_args.index("--config") + 1] == config_path, f, "CMD --config differs from the Deployment's")
    # The binary carries its SQL migrations (the EmbedMigrations plugin), so the
    # build stage needs schemas/ (and Sources/, where the plugin is), and the runtime image no copy of them.
    copied = [r.split()[0] for w, r in build if w == "COPY"]
    for src in ("Package.swift", "Sources", "schemas"):
        c.check(src in copied, f, f"the build stage does not COPY {src}, which the build needs")
    env = " ".join(r for w, r in runtime if w == "ENV")
    c.check("PUSHFLEET_MIGRATIONS_DIR" not in env, f, "PUSHFLEET_MIGRATIONS_DIR would replace the migrations built into the binary")
    ignore = c.path("deploy", "docker", "Dockerfile.dockerignore")
    if c.check(os.path.exists(ignore), ignore, "missing (BuildKit's <Dockerfile>.dockerignore)"):
        patterns = [l.strip() for l in open(ignore) if l.strip() and not l.startswith("#") and not l.startswith("!")]
        for src in ("Package.swift", "Sources", "Tests", "schemas", "schemas/postgres"):
            c.check(not any(fnmatch.fnmatch(src, p) for p in patterns), ignore, f"excludes {src}, which the build needs")
        # Docker applies the last matching line: a later `!` pattern brings a file back.
        lines = [l.strip() for l in open(ignore) if l.strip() and not l.startswith("#")]
        last = [l for l in lines if fnmatch.fnmatch("scripts/kafka-tools.sh", l.lstrip("!")) or fnmatch.fnmatch("scripts", l.lstrip("!"))]
        c.check(not last or last[-1].startswith("!"), ignore, "excludes scripts/kafka-tools.sh, which the build needs")
    c.check(not os.path.exists(c.path(".dockerignore")), c.path(".dockerignore"), "a root .dockerignore is not allowed (use deploy/docker/Dockerfile.dockerignore)")
    return config_path


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if len(argv) == 2 and argv[0] == "--root":
        root = argv[1]
    elif argv:
        print(__doc__)
        return 2
    c = Checker(root)
    docs = load_yaml_documents(c)
    jsons = load_json_files(c)
    config, cm = check_config(c, docs)
    dep = check_deployment(c, docs, config, cm)
    check_secret_example(c, docs)
    check_jobs(c, docs, dep)
    check_pdb(c, docs, dep)
    check_keda(c, docs, dep, config)
    check_kustomization(c, docs)
    check_schemas(c, docs)
    check_dashboard(c, jsons)
    check_create_topics(c, config)
    image_config_path = check_dockerfile(c, config, dep)
    check_systemd(c, config, image_config_path or "/etc/pushfleet/config.json")
    for line in c.failures:
        print(line)
    for s in c.skipped:
        print(f"skipped: {s}")
    print(f"deploy checks: {c.passed} passed, {len(c.failures)} failed")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
