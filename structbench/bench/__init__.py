"""The harness: tasks, strategies (the registry), referees, typed settings, the runner, the row schema and the
Parquet store."""
