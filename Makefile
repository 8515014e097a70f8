# accel.openstack: every task a user or CI needs. `make demo` and `make test` are the two entry points.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
PLACEMENT_VENV := .venv-placement
NOVA_VENV := .venv-nova
# The newest ansible-core runs on Python 3.12 (its controller needs 3.12 or newer), beside 2.19 on 3.11.
NEWEST_VENV := .venv-newest
KOLLA_VENV := .venv-kolla
# The real Ironic 39 and Cyborg 17 (Python 3.11), each in its own venv: they pin their own oslo libraries.
IRONIC_VENV := .venv-ironic
CYBORG_VENV := .venv-cyborg
# Python 3.12 for the newest ansible-core and Kolla-Ansible 23: $PYTHON312, python3.12 on PATH, or pyenv's.
PYTHON312 := $(shell tests/find_python.sh 3.12 2>/dev/null)
KOLLA_PYTHON ?= $(PYTHON312)
COLLECTIONS := $(CURDIR)/.build/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/accel/openstack
DEMO_DIR := $(CURDIR)/.demo
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH := true
export ANSIBLE_NOCOLOR := true
export ANSIBLE_STDOUT_CALLBACK := default
export ANSIBLE_LOCALHOST_WARNING := false
export ANSIBLE_INVENTORY_UNPARSED_WARNING := false
export PATH := $(BIN):$(PATH)
export ACCEL_PLACEMENT_VENV := $(CURDIR)/$(PLACEMENT_VENV)
export ACCEL_NOVA_VENV := $(CURDIR)/$(NOVA_VENV)
export ACCEL_KOLLA_VENV := $(CURDIR)/$(KOLLA_VENV)
export ACCEL_IRONIC_VENV := $(CURDIR)/$(IRONIC_VENV)
export ACCEL_CYBORG_VENV := $(CURDIR)/$(CYBORG_VENV)
PYTEST_ARGS ?=
# Both cores for the integration tests: each xdist worker starts its own Placement.
INTEGRATION_WORKERS ?= 2
# Both cores for the unit and hostile suites too.
UNIT_WORKERS ?= 2

.PHONY: help venv placement-venv nova-venv newest-venv kolla-venv ironic-venv cyborg-venv collection demo demo-roots test lint ruff \
        ansible-lint sanity sanity-newest docs-lint unit unit-newest hostile integration integration-costs checks molecule build docs-check \
        clean benchmark benchmark-wide-trees calibrate-placement differential-full differential-flavors names catalog audit-example browser changelog

help:
	@echo "make demo   - run the whole pipeline (site.yml) on the embedded demo fleet"
	@echo "make test   - run every test: lint, docs-lint, sanity and unit on ansible-core 2.19 and the newest,"
	@echo "              hostile input, integration (real Placement, real Nova, Kolla-Ansible), molecule"

# Each venv is a link to one built once per content of its requirements file and interpreter (tests/venv.sh,
# cached under ~/.cache/accel-openstack/venvs or $ACCEL_VENV_CACHE): a fresh clone reuses them.
venv:
	@tests/venv.sh $(VENV) $(PYTHON) requirements/test.txt

placement-venv:
	@tests/venv.sh $(PLACEMENT_VENV) $(PYTHON) requirements/placement.txt

nova-venv:
	@tests/venv.sh $(NOVA_VENV) $(PYTHON) requirements/nova.txt

newest-venv:
	@test -n "$(PYTHON312)" || tests/find_python.sh 3.12
	@tests/venv.sh $(NEWEST_VENV) $(PYTHON312) requirements/newest.txt

kolla-venv:
	@test -n "$(KOLLA_PYTHON)" || { echo "kolla-ansible 23 needs Python >= 3.12: set KOLLA_PYTHON"; exit 1; }
	@tests/venv.sh $(KOLLA_VENV) $(KOLLA_PYTHON) requirements/kolla.txt

ironic-venv:
	@tests/venv.sh $(IRONIC_VENV) $(PYTHON) requirements/ironic.txt

cyborg-venv:
	@tests/venv.sh $(CYBORG_VENV) $(PYTHON) requirements/cyborg.txt

# The standard traits and resource classes, regenerated from the os-traits and os-resource-classes
# pinned in requirements/nova.txt, Nova's extra-spec validator table and its [libvirt] options (run after
# changing those pins).
names: nova-venv
	$(NOVA_VENV)/bin/python tests/support/gen_standard_names.py
	$(NOVA_VENV)/bin/python tests/support/gen_extra_specs.py
	$(NOVA_VENV)/bin/python tests/support/gen_libvirt_options.py

# The device catalog's data module, rewritten from plugins/module_utils/_host/device_catalog.yml (run after
# editing the YAML; a unit test fails while the two differ).
catalog: venv
	$(BIN)/python tests/support/gen_device_catalog.py

# The repository root is the collection root; ansible finds it through this link.
collection:
	@mkdir -p $(dir $(COLLECTION_LINK))
	@ln -sfn $(CURDIR) $(COLLECTION_LINK)

demo-roots: venv
	$(BIN)/python -m tests.support.fake_sysfs --all --dest $(DEMO_DIR)/roots --inventory inventories/demo/hosts.yml

demo: venv placement-venv collection demo-roots
	ACCEL_DEMO_DIR=$(DEMO_DIR) $(BIN)/python -m tests.support.run_demo

# A hand-built GPU cloud with planted defects, audited read-only (docs/audit.md).
audit-example: venv placement-venv collection
	$(BIN)/python -m tests.support.audit_example

ruff: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

ansible-lint: venv collection
	$(BIN)/ansible-lint --profile production --offline playbooks/ roles/ site.yml

sanity: venv
	tests/run_sanity.sh

# The newest ansible-core checks what ships; the test code (never shipped) is checked once, by `make sanity`.
sanity-newest: newest-venv
	ACCEL_SANITY_VENV=$(NEWEST_VENV) ACCEL_SANITY_LEAVE_OUT="tests benchmarks molecule" tests/run_sanity.sh

# antsibull-docs and antsibull-changelog, as galaxy and the docsite run them.
docs-lint: newest-venv
	ACCEL_DOCS_LINT_VENV=$(NEWEST_VENV) tests/run_docs_lint.sh

# The release of galaxy.yml's version in changelogs/changelog.yaml and CHANGELOG.rst, from every fragment.
changelog: newest-venv
	ACCEL_DOCS_LINT_VENV=$(NEWEST_VENV) tests/release_changelog.sh

lint: ruff ansible-lint

unit: venv placement-venv nova-venv collection
	$(BIN)/python -m pytest tests/unit -n $(UNIT_WORKERS) $(PYTEST_ARGS)

# Hostile input: links out of the root, injection into written files, secrets, hangs, wrong types.
hostile: venv collection
	$(BIN)/python -m pytest tests/hostile -n $(UNIT_WORKERS) $(PYTEST_ARGS)

# On the newest ansible-core, the unit tests that go through ansible-core's own code (tests/unit/conftest.py);
# the others test the collection's own computations and run once, in `make unit`.
unit-newest: newest-venv placement-venv nova-venv collection
	ACCEL_UNIT_SCOPE=ansible-core $(NEWEST_VENV)/bin/python -m pytest tests/unit -n $(UNIT_WORKERS) $(PYTEST_ARGS)

# Debian's chromium renders the HTML report to a screenshot in the integration tests.
browser:
	@command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }

# A module's tests stay on one worker (its module fixtures are built once), and so do the modules of one
# xdist_group (the service they share starts once); the costliest are handed out first
# (tests/integration/conftest.py, tests/integration/module_costs.json, kept current by `make integration-costs`).
INTEGRATION_DIST := -n $(INTEGRATION_WORKERS) --dist loadgroup --no-loadscope-reorder

integration: venv placement-venv nova-venv kolla-venv ironic-venv cyborg-venv collection browser
	$(BIN)/python -m pytest tests/integration $(INTEGRATION_DIST) $(PYTEST_ARGS)

# The integration run that rewrites tests/integration/module_costs.json with what each module took.
integration-costs: venv placement-venv nova-venv kolla-venv ironic-venv cyborg-venv collection browser
	ACCEL_RECORD_MODULE_COSTS=1 $(BIN)/python -m pytest tests/integration $(INTEGRATION_DIST) $(PYTEST_ARGS)

molecule: venv collection
	tests/run_molecule.sh

# Both cores all the way: the integration tests (the longest target, two workers) start first, in the
# background, and the other targets run beside them one after another, filling the cores while either side
# waits on a service, a chroot or a subprocess. The integration output is printed whole when both are done;
# each other target's time is said as it ends.
CHECKS := sanity sanity-newest lint docs-lint unit unit-newest hostile molecule

test: venv placement-venv nova-venv newest-venv kolla-venv ironic-venv cyborg-venv collection browser
	@mkdir -p .build; start=$$(date +%s); \
	  ( TIMEFORMAT="make test: integration took %0R s (CPU: %0U s user, %0S s system)"; \
	    { time $(MAKE) --no-print-directory integration > .build/make-test-integration.log 2>&1; } 2> .build/make-test-integration.time; \
	    echo $$? > .build/make-test-integration.rc ) & \
	  $(MAKE) --no-print-directory checks; checks=$$?; wait; \
	  cat .build/make-test-integration.log .build/make-test-integration.time; integration=$$(cat .build/make-test-integration.rc); \
	  echo "make test: $$(( $$(date +%s) - start )) s in all (integration exit $$integration, the other parts exit $$checks)"; \
	  [ $$checks -eq 0 ] && [ $$integration -eq 0 ]

# The other targets one after another, each one's time (and the CPU it took) said as it ends.
checks:
	@for target in $(CHECKS); do TIMEFORMAT="make test: $$target took %0R s (CPU: %0U s user, %0S s system)"; \
	  time $(MAKE) --no-print-directory $$target || exit 1; done

build: venv
	$(BIN)/ansible-galaxy collection build --force --output-path .build

clean:
	rm -rf .build .demo .audit-example .pytest_cache .ruff_cache

differential-full: venv placement-venv collection
	ACCEL_DIFFERENTIAL_CASES=1000 $(BIN)/python -m pytest tests/integration -k differential $(PYTEST_ARGS)

differential-flavors: venv placement-venv nova-venv collection
	ACCEL_FLAVOR_CASES=3000 ACCEL_FLAVOR_PLACEMENT_CASES=600 $(BIN)/python -m pytest tests/integration/test_flavor_differential.py $(PYTEST_ARGS)

benchmark-discovery: venv collection
	$(BIN)/python benchmarks/bench_discovery.py

benchmark-placement: venv placement-venv collection
	$(BIN)/python benchmarks/bench_placement.py

benchmark-solver: venv placement-venv collection
	$(BIN)/python benchmarks/bench_solver.py

benchmark-flavor-fit: venv collection
	$(BIN)/python benchmarks/bench_flavor_fit.py
	$(BIN)/python benchmarks/bench_flavor_fit.py --usage-patterns 10000
	$(BIN)/python benchmarks/bench_flavor_fit.py --usage-patterns 10000 --busy-devices 0.3

benchmark-audit: venv collection
	$(BIN)/python benchmarks/bench_audit.py

benchmark-capacity: venv collection
	$(BIN)/python benchmarks/bench_capacity.py

# Full-node GPU flavors on 1,000 HGX hosts, and the solver beside the real Placement at its advised settings.
benchmark-wide-trees: venv placement-venv collection
	$(BIN)/python benchmarks/bench_wide_trees.py

# The per-item costs of the model of Placement's work, fitted on the real Placement (minutes).
calibrate-placement: venv placement-venv collection
	$(BIN)/python benchmarks/calibrate_placement.py

benchmark: benchmark-discovery benchmark-placement benchmark-solver benchmark-flavor-fit benchmark-audit \
           benchmark-capacity benchmark-wide-trees
