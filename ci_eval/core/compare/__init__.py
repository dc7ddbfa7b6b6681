"""Two runs compared: the per-question diff and its columns, the statistics, the gate's verdict,
the trend and the run's warnings."""
