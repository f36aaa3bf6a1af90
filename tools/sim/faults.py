"""The names a fault leaves on a node, shared by the CLI and the health agent."""
HARDWARE_LABEL = "nvidia.com/gpu.health"
HARDWARE_VALUE = "unhealthy"
HARDWARE_CONDITION = "GpuHealthy"
# On a pod running on a node when a fault was injected there: kwok matches it against the fault's stage then.
FAULT_SEEN = "sim.cre.certification/fault-injected"
