# Veridoc — every entry point installs what it needs first (Debian).
SHELL := /bin/bash
SWIFT ?= swift
APT_PACKAGES := pkg-config libssl-dev
CONFIGURATION ?= debug

.PHONY: setup build release test demo clean

# Installs only what is missing, so it is cheap to run before every target.
setup:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release

test: setup
	$(SWIFT) test

demo: release
	.build/release/veridoc demo

clean:
	rm -rf .build
