"""TREC files and trec_eval semantics: parsing qrels and runs, judging, the measure table."""
