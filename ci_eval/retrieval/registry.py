"""Which module runs each retriever type. Data only, apart from query.py and from
``pipeline.runner_for``, so that the runner modules (which import ``Query``) and the worker
(which reads ``IN_WORKER``) are never imported back by what they import."""

# retriever.type -> the module whose ``runner`` implements it. A new type is one module and
# one line here; modules are imported only when their type is used.
RUNNER_MODULES = {
    "python": "ci_eval.retrieval.python_runner",
    "command": "ci_eval.retrieval.command_runner",
    "run-file": "ci_eval.retrieval.run_file",
    "langchain": "ci_eval.retrieval.langchain_runner",
    "llamaindex": "ci_eval.retrieval.llamaindex_runner",
    "haystack": "ci_eval.retrieval.haystack_runner",
}

# The types whose user code runs in the worker process (retrieval/worker.py).
IN_WORKER = frozenset({"python", "langchain", "llamaindex", "haystack"})
