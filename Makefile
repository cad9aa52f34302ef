# PushFleet front door. `make demo` and `make test` install what is missing first.
SWIFT ?= swift
BUILD_FLAGS ?=
BIN := .build/debug/pushfleet

.PHONY: deps build demo test lint bench clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build $(BUILD_FLAGS) --product pushfleet

# The fleet end to end: 3-broker mock Kafka, the APNs/FCM simulator, two
# worker processes and a throwaway PostgreSQL; prints the outcome table.
demo: build
	bash scripts/with-postgres.sh $(BIN) demo --notifications $${DEMO_NOTIFICATIONS:-1000} --workers $${DEMO_WORKERS:-2}

# Unit, component and end-to-end tests (a throwaway PostgreSQL for the run).
test: deps
	python3 scripts/check-schemas.py
	python3 scripts/check-deploy.py
	python3 scripts/check-docs.py
	$(SWIFT) build $(BUILD_FLAGS) --build-tests
	SWIFT="$(SWIFT)" BUILD_FLAGS="$(BUILD_FLAGS)" bash scripts/run-tests.sh

# Release build, then `pushfleet bench send --compare-h2load` and `bench pipeline`
# (100,000 notifications each; BENCH_NOTIFICATIONS, BENCH_WORKERS, BENCH_CONNECTIONS,
# BENCH_CONCURRENCY override; JSON results in .build/bench/).
bench: deps
	SWIFT_BUILD_FLAGS="$(BUILD_FLAGS)" bash scripts/bench.sh

lint: deps
	$(SWIFT) build --build-tests -Xswiftc -warnings-as-errors

clean:
	rm -rf .build
