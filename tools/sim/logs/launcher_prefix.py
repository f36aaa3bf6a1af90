"""What a launcher puts before each line a rank prints (`log_style` field `nccl_prefix`).

`srun -l`: the task number right-aligned to the widest one, then `: ` (Slurm's step_io.c `_build_label`,
`"%*d: "`); OpenMPI's `mpirun --tag-output`: `[jobid,rank]<stdout>:` with the first job's id, 1; torchrun's
`--log-line-prefix-template '[rank${rank}]:'`, which its tee writes straight before the line (tail_log.py).
Lines a rank did not print (the shell's own) get none.
"""
from __future__ import annotations


def prefix(style: str, rank: int | None, tasks: int) -> str:
    """The prefix of a line of task `rank` (None: not a rank's) among `tasks` tasks."""
    if rank is None or style == "none":
        return ""
    if style == "srun":
        return f"{rank:>{len(str(max(tasks - 1, 0)))}}: "
    if style == "tag-output":
        return f"[1,{rank}]<stdout>:"
    return f"[rank{rank}]:"
