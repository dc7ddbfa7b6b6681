"""Which framework a project declares, and the files init composes (core/scaffold.py)."""

import pytest

from ci_eval.core.scaffold import detect_framework, distribution, next_steps, project_files


@pytest.mark.parametrize("requirement, name", [
    ("llama_index.core[extra]>=0.10 ; python_version > '3.9'", "llama-index-core"),
    ("LangChain-Community==0.4", "langchain-community"),
    ("  haystack-ai", "haystack-ai"),
    ("# a comment", None),
])
def test_distribution_names_are_normalised_as_pip_does(requirement, name):
    assert distribution(requirement) == name


def test_the_first_declared_framework_by_priority_and_the_others_listed():
    found = detect_framework([("requirements.txt", "haystack-ai"), ("pyproject.toml", "langchain-openai>=0.2")])
    assert (found.framework, found.source, found.others) == ("langchain", "pyproject.toml", ("haystack",))
    assert detect_framework([("requirements.txt", "langchainx"), ("requirements.txt", "llama")]) is None
    assert detect_framework([("requirements.txt", "farm-haystack==1.26")]).framework == "haystack"


def test_files_come_from_the_templates_with_the_retriever_filled_in():
    files = project_files("haystack", lambda name: f"<{name}>{{retriever}}\nextra-requirements: x\n", False)
    assert files["eval/example_retriever.py"].startswith("<retriever-haystack.py.tmpl>")
    assert 'type = "haystack"\ntarget = "eval.example_retriever:retriever"' in files["ci-eval.toml"]
    assert "extra-requirements" not in files[".github/workflows/ci-eval.yml"]
    assert "extra-requirements" in files[".github/workflows/ci-eval-comment.yml"]  # only the first installs


def test_next_steps_name_the_package_the_example_needs():
    text = next_steps("llamaindex", None)
    assert "pip install llama-index-core" in text and text.count("\n  ") == 3
