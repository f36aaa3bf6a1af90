"""The kube client layer: client (an ApiClient from kubernetes.core's auth options), rest (raw JSON REST, the
driver's every request), watch (list + watch: the informer), retry (which failures are sent again, and when) and
errors (what a failed request was doing, as one line)."""
