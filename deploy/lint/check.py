#!/usr/bin/env python3
"""Checks of the deployment files that no generic linter makes.

  check.py manifests SCHEMA FILE...   rendered `helm template` output
  check.py compose SCHEMA COMPOSE     docker-compose.yml and its config file
  check.py dockerfile PACKAGE DOCKERFILE

manifests: built-in kinds against the Kubernetes OpenAPI schemas (strict,
oldest and newest version the chart supports, from kubernetes-validate's
bundled copies: no network); the CRD kinds (KEDA ScaledObject, Prometheus
ServiceMonitor) by the fields the chart relies on; the ConfigMap's
config.json against Schemas/config.schema.json; and the chart's rules
(grace > drain, non-root, read-only root, no capabilities, probes' paths,
key files under mounted volumes), for the worker and, when rendered, the
session API (veridoc serve): its ports (API and metrics listener, where its probes go) and config.serve, and that no
selector of one (Deployment, Service, PodDisruptionBudget, ServiceMonitor)
matches the other's pods.

compose: the worker's config against the schema, its stop_grace_period
against worker.drainTimeoutSeconds, bind-mount sources exist, and the worker
waits for its dependencies in the right way; the serve service, when there,
likewise, with the same config, its port published and a /readyz healthcheck.

dockerfile: every apt provider of a system-library target in Package.swift
is installed in the build stage, and its runtime library in the final stage.
"""
import json
import os
import re
import sys

import jsonschema
import kubernetes_validate
import yaml

KUBERNETES_VERSIONS = ("1.25.0", "1.37.0")
CRD_KINDS = {"ScaledObject", "ServiceMonitor"}
# Debian -dev package of a system library -> the runtime package that ships its .so.
RUNTIME_PACKAGE = {
    "libssl-dev": "libssl3",
    "librdkafka-dev": "librdkafka1",
    "libpq-dev": "libpq5",
    "libmicrohttpd-dev": "libmicrohttpd12",
    "libcurl4-openssl-dev": "libcurl4",
    "zlib1g-dev": "zlib1g",
}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def validator(schema_path):
    with open(schema_path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def config_errors(config_validator, config):
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in config_validator.iter_errors(config)]


def seconds(text):
    match = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", str(text))
    if not match or not any(match.groups()):
        raise ValueError(f"unsupported duration {text!r}")
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)


def check_manifests(schema_path, files):
    config_validator = validator(schema_path)
    for path in files:
        checked_before = len(failures)
        with open(path) as f:
            documents = [d for d in yaml.safe_load_all(f) if d]
        kinds = {}
        for doc in documents:
            kind, name = doc.get("kind"), doc.get("metadata", {}).get("name")
            where = f"{path} {kind}/{name}"
            kinds.setdefault(kind, []).append(doc)
            if kind in CRD_KINDS:
                check_crd(where, doc)
                continue
            for version in KUBERNETES_VERSIONS:
                try:
                    kubernetes_validate.validate(doc, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    fail(where, f"Kubernetes {version}: {error.message} at {'/'.join(map(str, error.path))}")
                except kubernetes_validate.SchemaNotFoundError:
                    fail(where, f"no Kubernetes {version} schema for {doc.get('apiVersion')} {kind}")
        before = len(failures)
        check_pods(path, kinds, config_validator)
        status = "ok" if len(failures) == before == checked_before else "FAILED"
        print(f"{status} -- {path}: {', '.join(sorted(f'{k} x{len(v)}' if len(v) > 1 else k for k, v in kinds.items()))}")


def check_crd(where, doc):
    spec = doc.get("spec", {})
    if doc["kind"] == "ScaledObject":
        if doc.get("apiVersion") != "keda.sh/v1alpha1":
            fail(where, "apiVersion must be keda.sh/v1alpha1")
        if not spec.get("scaleTargetRef", {}).get("name"):
            fail(where, "spec.scaleTargetRef.name missing")
        if not 0 <= spec.get("minReplicaCount", 0) <= spec.get("maxReplicaCount", -1):
            fail(where, "needs 0 <= minReplicaCount <= maxReplicaCount")
        for trigger in spec.get("triggers", []):
            metadata = trigger.get("metadata", {})
            if trigger.get("type") not in ("kafka", "apache-kafka"):
                fail(where, f"unexpected trigger type {trigger.get('type')}")
            for key in ("bootstrapServers", "consumerGroup", "topic", "lagThreshold"):
                if not isinstance(metadata.get(key), str) or not metadata[key]:
                    fail(where, f"trigger metadata.{key} must be a non-empty string")
        if not spec.get("triggers"):
            fail(where, "no triggers")
    elif doc["kind"] == "ServiceMonitor":
        if doc.get("apiVersion") != "monitoring.coreos.com/v1":
            fail(where, "apiVersion must be monitoring.coreos.com/v1")
        if not spec.get("selector", {}).get("matchLabels"):
            fail(where, "spec.selector.matchLabels missing")
        # The metrics listener of the worker or of serve (serve's API port has no /metrics).
        if not any(e.get("port") == "metrics" and e.get("path") == "/metrics" for e in spec.get("endpoints", [])):
            fail(where, "no endpoint scraping port metrics at /metrics")


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def check_pods(path, kinds, config_validator):
    """The worker's Deployment, serve's when rendered, and what selects their pods."""
    configmaps = kinds.get("ConfigMap", [])
    by_container = {}
    for deployment in kinds.get("Deployment", []):
        names = tuple(c["name"] for c in deployment["spec"]["template"]["spec"]["containers"])
        by_container.setdefault(names, []).append(deployment)
    workers, serves = by_container.pop(("worker",), []), by_container.pop(("serve",), [])
    if len(workers) != 1 or len(serves) > 1 or by_container or len(configmaps) != 1:
        fail(path, "expected one ConfigMap, one worker Deployment and at most one serve Deployment")
        return
    config = json.loads(configmaps[0]["data"]["config.json"])
    for error in config_errors(config_validator, config):
        fail(f"{path} ConfigMap config.json", error)
    check_worker(path, kinds, config, workers[0])
    if serves:
        check_serve(path, kinds, config, serves[0])
    check_selectors(path, kinds, workers + serves)


def check_hardening(where, pod, container):
    if pod.get("securityContext", {}).get("runAsNonRoot") is not True:
        fail(where, "pod securityContext.runAsNonRoot must be true")
    context = container.get("securityContext", {})
    if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False:
        fail(where, f"{container['name']} needs readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
    if context.get("capabilities", {}).get("drop") != ["ALL"]:
        fail(where, f"{container['name']} must drop ALL capabilities")
    if pod.get("automountServiceAccountToken") is not False:
        fail(where, "automountServiceAccountToken must be false")


def check_mounted(where, container, config, files):
    """config.json and each (setting, file) of the config under a volume the container mounts."""
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    if "/etc/veridoc/config.json" not in mounts:
        fail(where, "config.json is not mounted at /etc/veridoc/config.json")
    for setting, file in files:
        if not any(file.startswith(m + "/") for m in mounts):
            fail(where, f"{setting} {file} is not under a mounted volume")


def check_probes(where, container, port, expected):
    for probe, path_ in expected:
        if probe not in container:
            continue
        get = container[probe].get("httpGet", {})
        if get.get("path") != path_ or get.get("port") != port:
            fail(where, f"{probe} must GET {path_} on port {port}")


def check_worker(path, kinds, config, deployment):
    where = f"{path} Deployment/{deployment['metadata']['name']}"
    pod = deployment["spec"]["template"]["spec"]
    drain = config.get("worker", {}).get("drainTimeoutSeconds")
    grace = pod.get("terminationGracePeriodSeconds")
    if not isinstance(drain, int) or not isinstance(grace, int) or grace < drain + 5:
        fail(where, f"terminationGracePeriodSeconds {grace} must be >= worker.drainTimeoutSeconds {drain} + 5")
    (container,) = pod["containers"]
    check_hardening(where, pod, container)
    if container.get("args", [])[:1] != ["run"]:
        fail(where, "the worker container must run `veridoc run`")
    check_mounted(where, container, config, [("replay.nonceKeyFile", config.get("replay", {}).get("nonceKeyFile", ""))])
    check_probes(where, container, "metrics", (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")))
    name = deployment["metadata"]["name"]
    for kind in ("ScaledObject", "HorizontalPodAutoscaler"):
        for scaler in kinds.get(kind, []):
            if scaler["spec"]["scaleTargetRef"]["name"] != name:
                fail(f"{path} {kind}/{scaler['metadata']['name']}", f"must scale the worker Deployment {name}")
    if "replicas" in deployment["spec"] and (kinds.get("ScaledObject") or kinds.get("HorizontalPodAutoscaler")):
        fail(where, "replicas must be left to the autoscaler")


def check_serve(path, kinds, config, deployment):
    where = f"{path} Deployment/{deployment['metadata']['name']}"
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    check_hardening(where, pod, container)
    if container.get("args", [])[:1] != ["serve"]:
        fail(where, "the serve container must run `veridoc serve`")
    serve = config.get("serve", {})
    if serve.get("loopbackOnly") is not False:
        fail(where, "config.serve.loopbackOnly must be false: probes and the Service reach the pod's address")
    ports = {p.get("name"): p.get("containerPort") for p in container.get("ports", [])}
    if ports.get("http") != serve.get("port"):
        fail(where, f"container port http {ports.get('http')} is not config.serve.port {serve.get('port')}")
    files = [("replay.nonceKeyFile", config.get("replay", {}).get("nonceKeyFile", ""))]
    for index, tenant in enumerate(config.get("tenants", [])):
        if "readerTokens" in tenant:
            files.append((f"tenants[{index}].readerTokens.signingKey", tenant["readerTokens"]["signingKey"]))
    check_mounted(where, container, config, files)
    if "metrics" not in ports:
        fail(where, "no container port metrics: serve's /metrics and probes are on its metrics listener (observability.port)")
    # The probes go to the metrics listener, which API clients do not reach and so cannot fill.
    check_probes(where, container, "metrics", (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")))
    command = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pause = int(command[1]) if command[:1] == ["sleep"] and len(command) == 2 else 0
    grace = pod.get("terminationGracePeriodSeconds", 30)
    if grace < pause + 5:
        fail(where, f"terminationGracePeriodSeconds {grace} must be >= the preStop sleep {pause} + 5")
    if "replicas" not in deployment["spec"]:
        fail(where, "serve needs replicas (no autoscaler targets it)")
    services = [s for s in kinds.get("Service", []) if selects(s["spec"].get("selector"), pod_labels(deployment))]
    if not any(p.get("name") == "http" and p.get("targetPort") == "http" for s in services for p in s["spec"]["ports"]):
        fail(where, "no Service selects the serve pods with a port http targeting http")


def pod_labels(deployment):
    return deployment["spec"]["template"]["metadata"].get("labels", {})


def check_selectors(path, kinds, deployments):
    """Each selector picks the pods of exactly one Deployment: its own."""
    for deployment in deployments:
        where = f"{path} Deployment/{deployment['metadata']['name']}"
        selector = deployment["spec"]["selector"]["matchLabels"]
        if not selects(selector, pod_labels(deployment)):
            fail(where, "spec.selector does not match its own pod template")
    selectors = [(f"Deployment/{d['metadata']['name']}", d["spec"]["selector"]["matchLabels"]) for d in deployments]
    selectors += [(f"Service/{s['metadata']['name']}", s["spec"].get("selector", {})) for s in kinds.get("Service", [])]
    selectors += [(f"PodDisruptionBudget/{b['metadata']['name']}", b["spec"]["selector"]["matchLabels"])
                  for b in kinds.get("PodDisruptionBudget", [])]
    for name, selector in selectors:
        matched = [d["metadata"]["name"] for d in deployments if selects(selector, pod_labels(d))]
        if len(matched) != 1:
            fail(f"{path} {name}", f"selects the pods of {len(matched)} Deployments ({', '.join(matched) or 'none'}); expected one")
    for monitor in kinds.get("ServiceMonitor", []):
        selector = monitor["spec"].get("selector", {}).get("matchLabels", {})
        matched = [s for s in kinds.get("Service", []) if selects(selector, s["metadata"].get("labels", {}))]
        ports = {p.get("name") for s in matched for p in s["spec"]["ports"]}
        where = f"{path} ServiceMonitor/{monitor['metadata']['name']}"
        if len(matched) != 1:
            fail(where, f"selects {len(matched)} Services; expected one")
        for endpoint in monitor["spec"].get("endpoints", []):
            if endpoint.get("port") not in ports:
                fail(where, f"endpoint port {endpoint.get('port')} is not a port of the Service it selects")


def check_compose(schema_path, compose_path):
    config_validator = validator(schema_path)
    base = os.path.dirname(os.path.abspath(compose_path))
    with open(compose_path) as f:
        compose = yaml.safe_load(f)
    services = compose["services"]
    worker = services["worker"]
    config_path = None
    for service_name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                host = os.path.normpath(os.path.join(base, source))
                if not os.path.exists(host):
                    fail(f"{compose_path} {service_name}", f"bind-mount source {source} does not exist")
                if service_name == "worker" and volume.split(":")[1] == "/etc/veridoc/config.json":
                    config_path = host
    if config_path is None:
        fail(compose_path, "worker does not mount a config at /etc/veridoc/config.json")
        return
    with open(config_path) as f:
        config = json.load(f)
    for error in config_errors(config_validator, config):
        fail(config_path, error)
    drain = config.get("worker", {}).get("drainTimeoutSeconds", 20)
    grace = seconds(worker.get("stop_grace_period", "10s"))
    if grace < drain + 5:
        fail(f"{compose_path} worker", f"stop_grace_period {grace}s must be >= worker.drainTimeoutSeconds {drain} + 5")
    expected = {"kafka": "service_healthy", "postgres": "service_healthy", "topics": "service_completed_successfully"}
    for dependency, condition in expected.items():
        if worker.get("depends_on", {}).get(dependency, {}).get("condition") != condition:
            fail(f"{compose_path} worker", f"depends_on {dependency} must have condition {condition}")
    for name in ("kafka", "postgres"):
        if "healthcheck" not in services[name]:
            fail(f"{compose_path} {name}", "needs a healthcheck")
    serve_summary = ""
    if "serve" in services:
        serve_summary = "; " + check_compose_serve(compose_path, base, services, config_path, config)
    print(f"ok -- {compose_path}: {len(services)} services; {os.path.relpath(config_path)} valid; stop_grace_period {grace}s > drain {drain}s{serve_summary}")


def check_compose_serve(compose_path, base, services, config_path, config):
    """The serve service: the worker's image and config, its port published, a /readyz healthcheck."""
    where = f"{compose_path} serve"
    worker, serve = services["worker"], services["serve"]
    if serve.get("image") != worker.get("image") or serve.get("build") != worker.get("build"):
        fail(where, "must use the worker's image")
    if serve.get("command", [])[:1] != ["serve"]:
        fail(where, "command must be serve --config …")
    mounts = {}
    for volume in serve.get("volumes", []):
        parts = volume.split(":")
        source = os.path.normpath(os.path.join(base, parts[0])) if parts[0].startswith(".") else parts[0]
        mounts[parts[1]] = source
    if mounts.get("/etc/veridoc/config.json") != config_path:
        fail(where, "does not mount the worker's config at /etc/veridoc/config.json")
    for volume in worker.get("volumes", []):
        if not volume.split(":")[0].startswith(".") and volume not in serve.get("volumes", []):
            fail(where, f"does not mount the worker's volume {volume} (the key files the config names)")
    settings = config.get("serve", {})
    port = settings.get("port", 8080)
    if settings.get("loopbackOnly", False) is not False:
        fail(config_path, "serve.loopbackOnly must be false in a container: the published port reaches the container's address")
    if not any(str(p).split(":")[-1].split("/")[0] == str(port) for p in serve.get("ports", [])):
        fail(where, f"does not publish serve.port {port}")
    test = serve.get("healthcheck", {}).get("test", [])
    if test[:1] != ["CMD"] or "/readyz" not in test or str(port) not in test:
        fail(where, f"healthcheck must be [CMD, veridoc-healthcheck, /readyz, {port}]")
    if serve.get("depends_on") != worker.get("depends_on"):
        fail(where, "depends_on must be the worker's")
    for key in ("read_only", "cap_drop", "security_opt"):
        if serve.get(key) != worker.get(key):
            fail(where, f"{key} must be the worker's")
    return f"serve on port {port}, healthcheck /readyz"


def check_dockerfile(package_path, dockerfile_path):
    with open(package_path) as f:
        package = f.read()
    with open(dockerfile_path) as f:
        dockerfile = f.read()
    stages = {}
    order = []
    for stage in re.split(r"(?m)^FROM\s", dockerfile)[1:]:
        name = re.match(r"\S+\s+AS\s+(\S+)", stage, re.I)
        if not name:
            fail(dockerfile_path, f"every stage needs a name: FROM {stage.splitlines()[0]}")
            return
        stages[name.group(1)] = stage
        order.append(name.group(1))
    if order[-1:] != ["runtime"] or "build" not in stages or "base" not in stages:
        fail(dockerfile_path, f"expected stages build, base and runtime (the product image) last, found {', '.join(order)}")
        return
    build = stages["build"]
    # What the product image installs and carries: base plus runtime.
    runtime = stages["base"] + stages["runtime"]
    if any("veridoc-dev" in line for line in runtime.splitlines() if not line.lstrip().startswith("#")):
        fail(dockerfile_path, "the product image (base, runtime) must not carry veridoc-dev")
    providers = sorted({p for group in re.findall(r"\.apt\(\[([^\]]*)\]\)", package) for p in re.findall(r'"([^"]+)"', group)})
    for provider in providers:
        if not re.search(rf"\b{re.escape(provider)}\b", build):
            fail(dockerfile_path, f"build stage does not install {provider} (a provider in Package.swift)")
        runtime_package = RUNTIME_PACKAGE.get(provider)
        if runtime_package is None:
            fail(__file__, f"no runtime package known for {provider}: add it to RUNTIME_PACKAGE and the Dockerfile")
        elif not re.search(rf"\b{re.escape(runtime_package)}\b", runtime):
            fail(dockerfile_path, f"runtime stage does not install {runtime_package} (runtime of {provider})")
    for needed in ('USER 10001', 'ENTRYPOINT ["veridoc"]', 'CMD ["run", "--config", "/etc/veridoc/config.json"]', "--static-swift-stdlib"):
        if needed not in dockerfile:
            fail(dockerfile_path, f"missing {needed}")
    print(f"ok -- {dockerfile_path}: Package.swift providers {', '.join(providers)} built and shipped; stages {', '.join(order)}")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[1], argv[2:]
    if command == "manifests":
        check_manifests(rest[0], rest[1:])
    elif command == "compose":
        check_compose(rest[0], rest[1])
    elif command == "dockerfile":
        check_dockerfile(rest[0], rest[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
