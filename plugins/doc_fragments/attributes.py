# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attribute descriptions every face of the collection shares; each face sets only `support`."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying the cluster.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.
  idempotent:
    description:
      - When run twice in a row outside check mode, with the same arguments, the second run reports no change.
      - This assumes the cluster and the files it reads have not changed in a relevant way in between.
  action_group:
    description: Use C(group/cre.certification.certification) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - cre.certification.certification
"""
