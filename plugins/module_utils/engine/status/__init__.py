"""What an object's status says, read-only: a Workflow's phase and groups, the measurements of a Job, the node
lists of the node-result ConfigMaps. A module here reads what the `reconcile/` module of the same name writes;
it imports only `api/`, so the tiers, the report and the driver all read the status the same way."""
