"""What `ci-eval init` writes: which framework the project uses (from its declared
dependencies), and every file's text. No I/O: the templates come in through ``template``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# Distribution names (normalised as pip does) -> retriever type, in the order they win when
# a project declares several.
_FRAMEWORKS = (
    ("langchain", re.compile(r"^langchain($|-)")),
    ("llamaindex", re.compile(r"^llama-index($|-)")),
    ("haystack", re.compile(r"^(haystack-ai|farm-haystack)$")),
)
FRAMEWORKS = tuple(name for name, _ in _FRAMEWORKS)
# retriever type -> (target in the example retriever, the pip package its example imports)
_EXAMPLE = {
    "python": ("search", None),
    "langchain": ("vector_store", "langchain-core"),
    "llamaindex": ("index", "llama-index-core"),
    "haystack": ("retriever", "haystack-ai"),
}
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Detected:
    framework: str  # a retriever type
    source: str  # the dependency file that declares it
    others: tuple[str, ...] = ()  # more frameworks declared, not chosen


def distribution(requirement: str) -> str | None:
    """``llama_index.core[extra]>=0.10 ; python_version>'3'`` -> ``llama-index-core``."""
    match = _REQUIREMENT_NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else None


def detect_framework(requirements: list[tuple[str, str]]) -> Detected | None:
    """``requirements`` are ``(file, requirement string)`` pairs from the project's files."""
    found: dict[str, str] = {}
    for source, requirement in requirements:
        name = distribution(requirement)
        for framework, pattern in _FRAMEWORKS:
            if name and pattern.match(name):
                found.setdefault(framework, source)
    ordered = [f for f in FRAMEWORKS if f in found]
    if not ordered:
        return None
    return Detected(ordered[0], found[ordered[0]], tuple(ordered[1:]))


# The end-to-end tools whose results feed the failure matrix ([answers], core/answers.py),
# in the order they win: promptfoo by its config file, the Python ones by a dependency.
PROMPTFOO_CONFIGS = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json", "promptfooconfig.js")
_ANSWER_TOOLS = (("deepeval", re.compile(r"^deepeval$")), ("ragas", re.compile(r"^ragas$")))
_ANSWERS_TABLE = {
    "promptfoo": ['type = "promptfoo"',
                  'path = "eval/promptfoo-results.json"   # promptfoo eval -c {found} -o eval/promptfoo-results.json',
                  "# each test's vars.id (or metadata.id) a gold question id; else its vars.question is matched",
                  "# to the gold question's exact text"],
    "deepeval": ['type = "deepeval"',
                 'path = "eval/deepeval-results"   # DEEPEVAL_RESULTS_FOLDER=eval/deepeval-results deepeval test run ...',
                 "# each LLMTestCase's additional_metadata={{\"id\": <gold question id>}}; else its input is matched",
                 'metric = "Correctness"          # optional: this metric\'s verdict instead of the test case\'s'],
    "ragas": ['type = "ragas"',
              'path = "eval/ragas-results.csv"   # evaluate(...).to_pandas(), an "id" column added, .to_csv(..., index=False)',
              'metric = "answer_correctness"     # the score column',
              "threshold = 0.7                   # correct at or above it"],
}


def detect_answers(requirements: list[tuple[str, str]], promptfoo_config: str | None) -> tuple[str, str] | None:
    """(answers type, where it was found): the end-to-end tool the project already runs."""
    if promptfoo_config:
        return "promptfoo", promptfoo_config
    for tool, pattern in _ANSWER_TOOLS:
        for source, requirement in requirements:
            name = distribution(requirement)
            if name and pattern.match(name):
                return tool, source
    return None


def answers_section(found: tuple[str, str] | None) -> str:
    """The config's ``[answers]`` section for that tool, commented out: it reads a file the
    team's eval writes, which does not exist until their workflow writes it."""
    if found is None:
        return ""
    tool, where = found
    lines = [f"[answers]   # {tool} found ({where}): its verdicts become the failure matrix's second axis "
             "(docs/answers.md)"] + [line.format(found=where) for line in _ANSWERS_TABLE[tool]]
    return "\n" + "\n".join("# " + line for line in lines) + "\n"


def retriever_table(kind: str) -> str:
    target, _ = _EXAMPLE[kind]
    lines = [f'type = "{kind}"', f'target = "eval.example_retriever:{target}"   # the example: replace it']
    if kind == "python":
        lines.append("# your function(question, depth) returns ranked (chunk id, score) pairs; depth is 3k unless set")
    else:
        lines.append("# your retriever, vector store, index or pipeline, or a function returning one")
        lines.append('# id_from = "metadata.chunk_id"   # where your chunk ids are: id, node_id, ref_doc_id, metadata.<key>')
        lines.append('# score = "distance"              # when lower scores are better (Chroma, pgvector)')
    return "\n".join(lines)


def project_files(kind: str, template: Callable[[str], str], requirements_txt: bool,
                  answers: tuple[str, str] | None = None) -> dict[str, str]:
    """Every file init writes, path -> text. ``requirements_txt``: the project has one for the
    workflow to install; ``answers``: the end-to-end tool found (detect_answers)."""
    workflow = template("ci-eval.yml.tmpl")
    if not requirements_txt:
        workflow = "".join(line for line in workflow.splitlines(keepends=True) if "extra-requirements:" not in line)
    return {
        "ci-eval.toml": template("ci-eval.toml.tmpl").replace("{retriever}", retriever_table(kind))
        + answers_section(answers),
        "eval/gold.json": template("gold.json.tmpl"),
        "eval/example_chunks.json": template("example_chunks.json.tmpl"),
        "eval/example_retriever.py": template(f"retriever-{kind}.py.tmpl"),
        ".github/workflows/ci-eval.yml": workflow,
        ".github/workflows/ci-eval-comment.yml": template("ci-eval-comment.yml.tmpl"),
    }


def next_steps(kind: str, detected: Detected | None, answers: tuple[str, str] | None = None) -> str:
    _, package = _EXAMPLE[kind]
    lines = []
    if detected is not None:
        also = f" (also declared: {', '.join(detected.others)})" if detected.others else ""
        lines.append(f"{detected.framework} found in {detected.source}{also}: retriever type {kind!r}")
    if answers is not None:
        lines.append(f"{answers[0]} found in {answers[1]}: a commented [answers] section in ci-eval.toml reads "
                     "its results into the failure matrix; uncomment it once your eval writes them")
    run = "ci-eval check && ci-eval run"
    if package:
        run = f"pip install {package} (if it is not installed), then {run}"
    lines += [
        "next steps:",
        f"  1. try the example as it is: {run}",
        "  2. replace the three example questions in eval/gold.json with real ones and the ids of the chunks "
        "that answer them, and point [retriever] target in ci-eval.toml at your retriever",
        "  3. commit ci-eval.toml, eval/ and .github/workflows/, push, and open a pull request: "
        "ci-eval comments on it",
    ]
    return "\n".join(lines)
