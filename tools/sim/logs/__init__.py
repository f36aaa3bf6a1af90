"""What the simulated workloads print: the log writers the agent runs, served through the pod log API.

- `workload_logs`: the pod log plumbing (kwok `Logs` objects over CRI-format files, `serve`, `cri`) and nccl-tests'
  output (`emit`: a group's bus bandwidth from its profile and the faults on its nodes and links).
- `nccl_output`: one nccl-tests run in a log style, from `nccl_info` (the NCCL_DEBUG=INFO lines), `nccl_tables`
  (the result tables of two nccl-tests generations) and `launcher_prefix` (srun, mpirun, torchrun line prefixes).
- `training_logs`: the Megatron training pods' lines as they run (stall and crash faults, checkpoints, resume),
  in the shapes of `training_styles`.
- `gemm_logs`: the worked example's GEMM goodput run (docs/catalog-entries.md).
- `burn_in_logs`: the GEMM burn-in harness's pods (`compute/gemm-burn-in`), their whole run printed at once by
  `burn_in_output` (per-product figures, NVML fields, the GPU faults); `dcgm_logs` and `dcgm_output` the same for
  `dcgmi diag`.
- `mpirun_output`: what Open MPI's mpirun prints when it cannot reach a worker (`ranks` prints it).
- `log_style`: the style per cluster and namespace (`python -m tools.sim log-style`) the writers print in.
"""
