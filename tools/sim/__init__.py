"""The local simulated GPU cluster: a real control plane, kwok nodes, Trainer and JobSet."""
