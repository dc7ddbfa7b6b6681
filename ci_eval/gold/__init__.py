"""The gold set's life outside a run: anchoring it to the index, remapping it after a
re-ingestion, importing judgements from other tools and exporting them back."""
