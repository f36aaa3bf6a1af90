"""The local simulated GPU cluster: a real control plane, kwok nodes, Trainer and JobSet (docs/dev/simulator.md).

The cluster side is flat here: its lifecycle (`cluster`: up, down, status, restart), its faults (`faults`), kwok's
Stages playing the kubelet (`stages`, `commands`, `containers`), the agent process and its passes (`agent`,
`ranks`, `cache`, `computedomain`, `volumes`), the processes it starts (`processes`, `controllers`), node
`profiles`, the on-disk `state`, and the tools on top (`__main__`: the CLI, `reset`, `smoke`, `load`, `demo`).
What the simulated workloads print is in `logs/`.
"""
