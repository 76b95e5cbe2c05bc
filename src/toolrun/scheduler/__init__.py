"""The DAG scheduler: runs plans on the workers' queues, keeping their state in the
database (`store`), so a restarted scheduler resumes every running plan."""
