"""Processing: stored mail taken in batches, each mail's commands carried out all or nothing, its answers written."""
