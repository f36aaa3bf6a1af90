"""The loops of the shell: observe, call the engine, execute its Steps, repeat.

The parent loop (parent.py) drives a Certification (certification.py) or a WorkloadRun (workloadrun.py) and, for
each Workflow they make, the Workflow loop.

The Workflow loop (workflow.py) takes each pass from its parts: schedule.py (what is due), worlds.py (what the
engine sees), measurements.py (the measurement passes), execute.py (a Step's writes), observe.py (the watches);
resident.py refuses a Workflow that a resident NVCRE controller manages.
"""
