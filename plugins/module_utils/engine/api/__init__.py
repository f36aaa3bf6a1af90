"""The API's vocabulary (every API string), the deliberate errors, object helpers (conditions, owners, times,
quantities), deterministic names, and the Step a reconcile returns with its actions."""
