"""A certification against its history: figures, baselines, rules, the comparison, repeat offenders and trends."""
