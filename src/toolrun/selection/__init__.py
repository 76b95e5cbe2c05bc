"""Tool selection: which tool fits a task, with what arguments, and why (five steps)."""
