"""The pure engine: every decision NVCRE's controllers make, as functions without I/O.

No Ansible imports and no network here; objects are Kubernetes-JSON dicts (camelCase keys).
"""
