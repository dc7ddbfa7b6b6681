"""Running the user's retriever: one module per retriever type, the pipeline that feeds the core."""
