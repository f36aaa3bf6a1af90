"""What a measurement reads from a workload's log, and what it makes of it.

log_lines (kubelet stamps, Go time layouts and numbers, shared by both readers) and launcher_prefix (srun, OpenMPI,
torchrun line prefixes); nccl_log (nccl-tests rows for a BandwidthMeasurement), nccl_tables (each row checked
against its table) and nccl_mnnvl (NCCL's multi-node NVLink lines); goodput_log (training steps, checkpoints and
restores for a GoodputMeasurement) and goodput (its arithmetic); profile_match (which LogProfile reads a training
log); log_check (a saved log read offline, the log_check module's engine). Pure: the text comes in as strings.
Above spec/ (log_check judges figures with spec/thresholds), below reconcile/ and report/.
"""
