"""From a spec and the nodes to what to create: detection, placement, dependencies, Jobs, workloads."""
