"""One module per experiment kind: `run(settings, trial, progress)` turns one trial's settings into rows.

Adding an experiment = one module here + one `conf/sweep/*.yaml` that sets `kind`.
"""
