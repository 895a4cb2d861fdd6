# Veridoc — each entry point installs what it needs first (Debian, as root or with sudo).
SHELL := /bin/bash
SWIFT ?= swift
APT_PACKAGES := pkg-config libssl-dev librdkafka-dev libpq-dev libmicrohttpd-dev postgresql python3-venv
# check-jsonschema validates the published schemas and their examples.
TOOLS_VENV := .build/tools-venv

.PHONY: setup build release test lint-schemas demo clean

## setup: install missing Debian packages (idempotent, quiet when nothing is missing)
setup:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift 6 toolchain not found on PATH"; exit 1; }

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release

$(TOOLS_VENV)/bin/check-jsonschema:
	python3 -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/pip install -q check-jsonschema

## lint-schemas: every schema is valid JSON Schema and every example validates
lint-schemas: setup $(TOOLS_VENV)/bin/check-jsonschema
	$(TOOLS_VENV)/bin/check-jsonschema --check-metaschema Schemas/*.schema.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/verification-requested.v1.schema.json Schemas/examples/verification-requested.*.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/verification-completed.v1.schema.json Schemas/examples/verification-completed.*.json
	$(TOOLS_VENV)/bin/check-jsonschema --schemafile Schemas/config.schema.json Schemas/examples/config.json

## test: the whole suite (unit, vectors when ../shared/vectors exists, CLI) and the schema lint
test: setup lint-schemas
	scripts/with-test-services $(SWIFT) test

## demo: the main job on embedded defaults
demo: release
	.build/release/veridoc demo

clean:
	rm -rf .build
