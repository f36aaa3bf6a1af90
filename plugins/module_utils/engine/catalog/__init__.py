"""The certification catalog: entries keyed by {domain, variant} and their template language."""
