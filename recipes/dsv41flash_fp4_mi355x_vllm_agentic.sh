#!/usr/bin/env bash
# DeepSeek-V4.1-Flash (MXFP4) AgentX recipe on MI355X with vLLM.
# Config: dsv41flash-fp4-mi355x-vllm-agentic-dspark (configs/amd-master.yaml).
#
# The benchmark template exports the matrix row as environment variables
# (`infx sweep row-env`): IMAGE, MODEL, TP, CONC, SPEC_DECODING, KV_OFFLOADING,
# KV_OFFLOAD_BACKEND, TOTAL_CPU_DRAM_GB, DURATION, EXP_NAME, RUN_EVAL; and RESULTS_DIR.
# The client the row asks for leaves its output where `infx results process` reads
# it: aiperf in $RESULTS_DIR/aiperf, lm-eval (eval rows) in $RESULTS_DIR/lm-eval.
# SERVER_URL points the client at a running server instead of starting one;
# BENCH_WORKLOAD replaces the AgentX trace replay (e.g. a short synthetic load).
#
# Usage: dsv41flash_fp4_mi355x_vllm_agentic.sh [--dry-run]
#   --dry-run  print the exact server and client commands and exit without starting anything.
set -euo pipefail

dry_run=false
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=true ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "dsv41flash recipe: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

for name in IMAGE MODEL TP CONC; do
  if [ -z "${!name:-}" ]; then
    echo "dsv41flash recipe: $name is not set; run it through the benchmark template or export the row (infx sweep row-env)" >&2
    exit 2
  fi
done

PORT="${PORT:-8000}"
SPEC_DECODING="${SPEC_DECODING:-none}"
KV_OFFLOADING="${KV_OFFLOADING:-none}"
EXP_NAME="${EXP_NAME:-dsv41flash}"
RESULTS_DIR="${RESULTS_DIR:-$PWD/results}"
NUM_SPECULATIVE_TOKENS="${NUM_SPECULATIVE_TOKENS:-2}"
DURATION="${DURATION:-3600}"
RUN_EVAL="${RUN_EVAL:-false}"

# A fixed batch ceiling. Deriving it as 2*CONC starved low-concurrency runs:
# at concurrency 1 requests queued for 16.2 s on average; with 128 they do not queue.
MAX_NUM_SEQS=128

server_env=(
  # AITER's Triton kernels log every launch at the default level; ERROR drops
  # about 411k of the 417k lines a run used to write to the server log.
  -e AITER_TRITON_LOG_LEVEL=ERROR
  -e VLLM_ROCM_USE_AITER=1
  -e HF_TOKEN
)

server_args=(
  vllm serve "$MODEL"
  --host 0.0.0.0
  --port "$PORT"
  --tensor-parallel-size "$TP"
  --max-num-seqs "$MAX_NUM_SEQS"
  # `aiter` lets AITER dispatch the fused MoE itself: on gfx950 with MXFP4
  # expert weights it selects the CK a8w4 kernels (8-bit activations, 4-bit
  # weights) instead of the Triton MXFP4/bf16 path that `aiter_triton_mxfp4_bf16`
  # pins. Measured: MoE GEMM 2.72 -> 2.30 ms/step at conc 1, 9.06 -> 7.18 at
  # conc 16; gsm8k unchanged at 0.9719.
  --moe-backend aiter
  --trust-remote-code
)

if [ "$SPEC_DECODING" = mtp ]; then
  server_args+=(--speculative-config "{\"method\":\"mtp\",\"num_speculative_tokens\":$NUM_SPECULATIVE_TOKENS}")
fi

if [ "$KV_OFFLOADING" = dram ]; then
  backend_name=$(printf '%s' "${KV_OFFLOAD_BACKEND:-}" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
  case "$backend_name" in
    vllm-simple|native) backend=native ;;
    lmcache) backend=lmcache ;;
    *) echo "dsv41flash recipe: unsupported kv-offload-backend '${backend_name:-<none>}'" >&2; exit 2 ;;
  esac
  if [ -z "${TOTAL_CPU_DRAM_GB:-}" ] || [ "$TOTAL_CPU_DRAM_GB" -le 0 ]; then
    echo "dsv41flash recipe: kv-offloading dram needs TOTAL_CPU_DRAM_GB > 0" >&2
    exit 2
  fi
  server_args+=(--kv-offloading-backend "$backend" --kv-offloading-size "$TOTAL_CPU_DRAM_GB")
fi

container="infx-${EXP_NAME//[^A-Za-z0-9_.-]/-}-$$"
server_cmd=(
  docker run --rm --name "$container"
  --network host --ipc host
  --device /dev/kfd --device /dev/dri --group-add video
  --security-opt seccomp=unconfined --shm-size 64g
  -v "${HF_HOME:-$HOME/.cache/huggingface}:/root/.cache/huggingface"
  -v "$RESULTS_DIR:/results"
  "${server_env[@]}"
  "$IMAGE"
  "${server_args[@]}"
)

url="${SERVER_URL:-http://127.0.0.1:$PORT}"

# The client the row asks for. Throughput rows replay AgentX traces with aiperf at the
# row's concurrency for the row's duration; eval rows (run-eval) score gsm8k with lm-eval.
if [ "$RUN_EVAL" = true ]; then
  client_cmd=(
    "${BENCH_LM_EVAL:-lm_eval}" --model local-chat-completions
    --model_args "model=$MODEL,base_url=$url/v1/chat/completions,num_concurrent=$CONC,max_retries=3,tokenized_requests=False"
    --tasks "${EVAL_TASKS:-gsm8k}" --num_fewshot 5 --apply_chat_template
    --output_path "$RESULTS_DIR/lm-eval"
  )
else
  if [ -n "${BENCH_WORKLOAD:-}" ]; then
    read -r -a workload <<<"$BENCH_WORKLOAD"
  else
    profile_seconds="$DURATION"
    warmup=()
    # Label agentx-fast: one warm-up request per lane and a 20-minute profile.
    if [ "${AGENTX_FAST:-}" = 1 ]; then
      profile_seconds=$((DURATION < 1200 ? DURATION : 1200))
      warmup=(--warmup-request-count "$CONC")
    fi
    workload=(
      --scenario inferencex-agentx-mvp
      --public-dataset semianalysis-cc-traces-weka-with-subagents
      --benchmark-duration "$profile_seconds"
      "${warmup[@]}"
    )
  fi
  client_cmd=(
    "${BENCH_AIPERF:-aiperf}" profile
    --model "$MODEL" --url "$url" --endpoint-type chat --streaming
    --tokenizer "${BENCH_TOKENIZER:-$MODEL}"
    --concurrency "$CONC" --use-server-token-count --random-seed 42
    --output-artifact-dir "$RESULTS_DIR/aiperf" --ui-type none --no-gpu-telemetry
    "${workload[@]}"
  )
fi

if [ "$dry_run" = true ]; then
  if [ -z "${SERVER_URL:-}" ]; then
    printf '%q ' "${server_cmd[@]}"
    printf '\n'
  fi
  printf '%q ' "${client_cmd[@]}"
  printf '\n'
  exit 0
fi

if ! command -v "${client_cmd[0]}" >/dev/null; then
  echo "dsv41flash recipe: the client ${client_cmd[0]} is not installed (aiperf: pip install 'infx[aiperf]')" >&2
  exit 2
fi

mkdir -p "$RESULTS_DIR"
if [ -z "${SERVER_URL:-}" ]; then
  cleanup() { docker stop "$container" >/dev/null 2>&1 || true; }
  trap cleanup EXIT

  "${server_cmd[@]}" >"$RESULTS_DIR/server.log" 2>&1 &
  server_pid=$!

  deadline=$((SECONDS + ${SERVER_START_TIMEOUT:-3600}))
  until curl -sf "$url/health" >/dev/null; do
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "::error::vLLM server exited during start-up; see server.log" >&2
      tail -n 50 "$RESULTS_DIR/server.log" >&2
      exit 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "::error::vLLM server did not become healthy in time" >&2
      exit 1
    fi
    sleep 10
  done
fi

"${client_cmd[@]}"
