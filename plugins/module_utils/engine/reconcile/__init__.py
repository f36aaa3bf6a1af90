"""One pass of each tier (Certification, Workflow, Job): the world observed in, a Step out."""
