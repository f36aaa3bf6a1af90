"""From a spec and the nodes to what to create.

The live Workflow's planning: detect (discovery, platform, exclusions), partition (the pipeline of its first
passes), placement (groups, affinity), dependencies, jobs, workload (the TrainJob), mnnvl (the trainer's
NCCL_MNNVL_ENABLE), network (the transport a group must use). The parents' builds: category_build and
category_detect (a Certification's category as a Workflow), workloadrun_build (a WorkloadRun's). Offline: render,
render_shape (as nvcrectl prints it), mocknodes (its Node sets), cluster_summary (`nvcrectl cluster info`).
"""
