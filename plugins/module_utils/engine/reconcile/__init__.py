"""One pass of each tier (Certification, Workflow, Job): the world observed in, a Step out.

The Workflow pass (`workflow_tier`) is built from parts with one job each: `workflow_plan` (its spec resolved
once), `workflow_writes` (the status it builds and its actions), `workflow_poll` (the Running groups' Jobs),
`dependency_ledger` (`status.dependencyRefs`) and `deadlines` (when to look again).
"""
