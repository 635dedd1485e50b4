#!/usr/bin/env bash
# One lent GPU in under ten minutes (issue 41, item 4): the quick benchmarks
# and the GPU tests (benchmarks/run_all.py, under 5 minutes), then the two
# medium reproductions that hold the time on a CPU, each on cuda in one
# process and cut off at its share of what is left. Every output goes to
# $OUT (the device machine's folder that comes back) or results/gpu.
#
#   bash benchmarks/gpu_session.sh
#
# Compare with benchmarks/gpu_reproductions_plan.py (the same medium cells
# on paper) and with the CPU run of docs/reproductions/medium/run.json.
set -u
out=${OUT:-results/gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
python -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())" | tee -a "$out/gpu.txt"
timeout 300 python benchmarks/run_all.py --device cuda --quick 2>&1 | tee "$out/run_all.txt"
for spec in two-step:150 feature-learning:120; do
  name=${spec%%:*}
  limit=${spec##*:}
  start=$(date +%s)
  timeout "$limit" python -m sklearn_pt reproduce "$name" --scale medium \
    --device cuda --n-jobs 1 --out "$out" --quiet > "$out/$name.log" 2>&1
  rc=$?
  echo "$name medium on cuda: rc=$rc (124: cut off at ${limit} s), $(( $(date +%s) - start )) s wall" \
    | tee -a "$out/medium.txt"
done
