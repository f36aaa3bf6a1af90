"""The certification catalog: registry (which categories exist: ours and a user's `Catalog`), entries (an entry
built into a WorkflowSpec), user (a user's `catalog_dirs` loaded and validated), template (the template
language), logprofiles (the built-in LogProfiles)."""
