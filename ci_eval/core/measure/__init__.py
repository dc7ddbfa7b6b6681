"""Rankings in, trec_eval-exact values out: the metric registry, the table of a run's values,
a ranking's checks. Imports nothing else of the core."""
