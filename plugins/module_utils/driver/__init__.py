"""The loops of the shell: observe, call the engine, execute its Steps, repeat.

The parent loop (parent.py) drives a Certification (certification.py) or a WorkloadRun (workloadrun.py) and, for
each Workflow they make, the Workflow loop.

The Workflow loop (workflow.py) takes each pass from its parts: schedule.py (what is due), worlds.py (what the
engine sees), measurements.py (the measurement passes), execute.py (a Step's writes), observe.py (the watches),
volumes.py (the PVs behind PVC dependencies); resident.py refuses a Workflow that a resident NVCRE controller
manages.

Around the loops: preflight.py (the APIs and permissions a run needs), options.py (RunOptions), errors.py
(DriverError), heartbeat.py (the line of a quiet run), pass_stats.py (what each pass cost), diff.py (--diff).
After a run: results.py (what it left, and the report files), history.py (earlier reports to compare with),
annotate.py (certified nodes stamped), fleet.py (the fleet report from the per-host folders).
"""
