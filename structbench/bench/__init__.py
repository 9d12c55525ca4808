"""The harness: tasks, strategies, referees, settings, runner and the Parquet store."""
