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
(grace > drain, non-root, read-only root, no capabilities, probes' paths).

compose: the worker's config against the schema, its stop_grace_period
against worker.drainTimeoutSeconds, bind-mount sources exist, and the worker
waits for its dependencies in the right way.

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
        check_worker(path, kinds, config_validator)
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
        if not any(e.get("port") == "metrics" and e.get("path") == "/metrics" for e in spec.get("endpoints", [])):
            fail(where, "no endpoint scraping port metrics at /metrics")


def check_worker(path, kinds, config_validator):
    deployments = kinds.get("Deployment", [])
    configmaps = kinds.get("ConfigMap", [])
    if len(deployments) != 1 or len(configmaps) != 1:
        fail(path, "expected one Deployment and one ConfigMap")
        return
    deployment, configmap = deployments[0], configmaps[0]
    where = f"{path} Deployment/{deployment['metadata']['name']}"
    config = json.loads(configmap["data"]["config.json"])
    for error in config_errors(config_validator, config):
        fail(f"{path} ConfigMap config.json", error)
    pod = deployment["spec"]["template"]["spec"]
    drain = config.get("worker", {}).get("drainTimeoutSeconds")
    grace = pod.get("terminationGracePeriodSeconds")
    if not isinstance(drain, int) or not isinstance(grace, int) or grace < drain + 5:
        fail(where, f"terminationGracePeriodSeconds {grace} must be >= worker.drainTimeoutSeconds {drain} + 5")
    if pod.get("securityContext", {}).get("runAsNonRoot") is not True:
        fail(where, "pod securityContext.runAsNonRoot must be true")
    (container,) = [c for c in pod["containers"] if c["name"] == "worker"]
    context = container.get("securityContext", {})
    if context.get("readOnlyRootFilesystem") is not True or context.get("allowPrivilegeEscalation") is not False:
        fail(where, "worker needs readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
    if context.get("capabilities", {}).get("drop") != ["ALL"]:
        fail(where, "worker must drop ALL capabilities")
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    if "/etc/veridoc/config.json" not in mounts:
        fail(where, "config.json is not mounted at /etc/veridoc/config.json")
    nonce = config.get("replay", {}).get("nonceKeyFile", "")
    if not any(nonce.startswith(m + "/") for m in mounts):
        fail(where, f"replay.nonceKeyFile {nonce} is not under a mounted volume")
    for probe, path_ in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        if probe in container and container[probe].get("httpGet", {}).get("path") != path_:
            fail(where, f"{probe} must GET {path_}")
    if "replicas" in deployment["spec"] and (kinds.get("ScaledObject") or kinds.get("HorizontalPodAutoscaler")):
        fail(where, "replicas must be left to the autoscaler")


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
    print(f"ok -- {compose_path}: {len(services)} services; {os.path.relpath(config_path)} valid; stop_grace_period {grace}s > drain {drain}s")


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
