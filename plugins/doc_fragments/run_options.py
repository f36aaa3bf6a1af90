# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of every face that drives a run: the same names, types and defaults everywhere."""
from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  timeout:
    description:
      - Seconds this task may run. When they pass, the task returns with RV(timed_out=true) and the objects keep
        their state; run the task again to continue.
      - Must be greater than 0.
    type: float
    default: 86400
  poll_interval:
    description:
      - Seconds between observations while nothing changes. Must be greater than 0.
    type: float
    default: 2.0
  heartbeat:
    description:
      - Seconds without a progress line after which a heartbeat line is printed - the time elapsed, the groups
        running and the longest-running Job. Must be greater than 0.
    type: float
    default: 300
"""
