"""The names a fault leaves on a node, shared by the CLI and the health agent."""
HARDWARE_LABEL = "nvidia.com/gpu.health"
HARDWARE_VALUE = "unhealthy"
HARDWARE_CONDITION = "GpuHealthy"
