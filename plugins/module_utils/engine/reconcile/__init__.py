"""One pass of each tier: the world observed in, a Step out.

The tiers: certification_tier, workloadrun_tier, workflow_tier, job_tier (world.py holds the last two's worlds),
bandwidth_tier and goodput_tier (the measurements; measurement and measurement_pods: what they share),
diagnose_tier (with diagnose_gate and diagnose_bisect).

The Workflow pass (`workflow_tier`) is built from parts with one job each: `workflow_plan` (its spec resolved
once), `workflow_writes` (the status it builds and its actions), `workflow_poll` (the Running groups' Jobs),
`dependency_ledger` (`status.dependencyRefs`), `deadlines` (when to look again) and `volumes` (the PVs behind
PVC dependencies). The Job pass's rules: job_stall, job_validation, job_measurements, health, attribution.
Shared: ownership (a Create that meets an existing object), node_results (the result ConfigMaps' writes) and
status (the status write and the Failed write).
"""
