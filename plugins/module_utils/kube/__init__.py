"""The kube client layer: API clients from kubernetes.core's auth options, nothing else."""
