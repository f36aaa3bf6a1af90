"""The API's vocabulary, the deliberate errors, object helpers and the Step a reconcile returns."""
