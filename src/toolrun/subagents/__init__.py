"""Sub-agents for the Task tool: definitions, where they come from, and their work loop."""
