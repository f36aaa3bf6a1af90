#!/bin/bash
# Megatron-LM pretraining of a Nemotron-5-shaped model on mock data: measures goodput, not accuracy.
set -e
WORKSPACE_DIR=${WORKSPACE_DIR:-/mnt/workspace}
MEGATRON_PATH=${MEGATRON_PATH:-$WORKSPACE_DIR/megatron-lm}
CHECKPOINT_DIR=${CHECKPOINT_DIR:-$WORKSPACE_DIR/checkpoints}
TENSORBOARD_DIR=${TENSORBOARD_DIR:-$WORKSPACE_DIR/tensorboard}

if ! ls "$MEGATRON_PATH"/megatron/core/datasets/helpers_cpp*.so >/dev/null 2>&1; then
  (cd "$MEGATRON_PATH" && pip install -e . --no-deps --no-build-isolation)
fi

CHECKPOINT_ARGS=""
if [ "$ENABLE_CHECKPOINT" = "true" ]; then
  mkdir -p "$CHECKPOINT_DIR"
  CHECKPOINT_ARGS="--save $CHECKPOINT_DIR"
  if [ -n "$(ls -A "$CHECKPOINT_DIR" 2>/dev/null)" ]; then
    CHECKPOINT_ARGS="$CHECKPOINT_ARGS --load $CHECKPOINT_DIR"
  fi
  CHECKPOINT_ARGS="$CHECKPOINT_ARGS --data-cache-path $WORKSPACE_DIR/data_cache"
fi

TOTAL_GPUS={{totalGPUs}}
TP=${TENSOR_PARALLELISM:-{{tp}}}
PP=${PIPELINE_PARALLELISM:-{{pp}}}
MBS=${MICRO_BATCH_SIZE:-1}
GBS=${GLOBAL_BATCH_SIZE:-$TOTAL_GPUS}

exec torchrun --nnodes "$PET_NNODES" --nproc-per-node "$PET_NPROC_PER_NODE" "$MEGATRON_PATH/pretrain_gpt.py" \
  --num-layers {{numLayers}} --hidden-size {{hiddenSize}} --ffn-hidden-size {{ffnHiddenSize}} \
  --num-attention-heads {{numHeads}} --num-query-groups {{numQueryGroups}} \
  --seq-length {{seqLength}} --max-position-embeddings {{seqLength}} \
  --distributed-timeout-minutes {{distributedTimeoutMinutes}} {{extraModelArgs}} \
  --attention-backend flash --use-mcore-models --no-mmap-bin-files --sequence-parallel \
  --untie-embeddings-and-output-weights --disable-bias-linear --init-method-std 0.014 \
  --position-embedding-type rope --rotary-base 1000000 --rotary-percent 1.0 --squared-relu \
  --group-query-attention --kv-channels 128 --normalization RMSNorm --attention-dropout 0.0 --hidden-dropout 0.0 \
  --exit-duration-in-mins {{exitDurationMins}} --train-iters {{maxSteps}} --lr-decay-iters 1830030 \
  --lr 6e-4 --min-lr 6e-6 --weight-decay 0.1 --clip-grad 1.0 --lr-decay-style cosine --lr-warmup-iters 5 \
  --eval-iters 1 --eval-interval {{maxSteps}} --log-interval 10 \
  --tokenizer-type NullTokenizer --vocab-size 131072 --mock-data --num-workers 1 \
  --no-create-attention-mask-in-dataloader \
  --log-progress --timing-log-option minmax --log-params-norm --log-num-zeros-in-grad --log-throughput \
  --bf16 --adam-beta1 0.9 --adam-beta2 0.95 --use-distributed-optimizer --overlap-grad-reduce \
  --overlap-param-gather --manual-gc \
  --log-straggler --disable-straggler-on-startup --straggler-minmax-count 16 \
  --check-weight-hash-across-dp-replicas-interval 20000 \
  --ckpt-fully-parallel-save --ckpt-fully-parallel-load --async-save --ckpt-assume-constant-structure \
  --ckpt-format torch_dist \
  --tensor-model-parallel-size "$TP" --pipeline-model-parallel-size "$PP" \
  --micro-batch-size "$MBS" --global-batch-size "$GBS" \
  --save-interval ${SAVE_INTERVAL:-250} --save-retain-interval ${SAVE_RETAIN_INTERVAL:-1000} \
  --tensorboard-dir "$TENSORBOARD_DIR" $CHECKPOINT_ARGS
