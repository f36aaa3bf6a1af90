"""What a Workflow spec means: overrides, strategic merge, JSON patch, CEL, the gang contract, the thresholds' CEL."""
