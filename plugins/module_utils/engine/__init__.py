"""The pure engine: every decision NVCRE's controllers make, as functions without I/O.

No Ansible imports, no network and no clock here; objects are Kubernetes-JSON dicts (camelCase keys). In layers,
each importing only those below it: report/ and history/ (what the user gets, and against what), reconcile/ (one
pass of each tier), plan/ (what to create), catalog/ (the categories), logs/ (what a measurement reads in a log),
spec/ (what a spec means), status/ (what a status says), models/ (the API's models), api/ (its vocabulary).
"""
