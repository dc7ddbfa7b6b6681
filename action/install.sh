#!/usr/bin/env bash
# What action.yml's install steps run; tests run it as it is (tests/github/test_action_install.py).
#
#   install.sh key      print the cache key of ci-eval's private environment (key=... to $GITHUB_OUTPUT)
#   install.sh install  install ci-eval; python=<interpreter that runs it> to $GITHUB_OUTPUT
#
# Environment:
#   CI_EVAL_SOURCE       the action's checkout (github.action_path)
#   CI_EVAL_USER_PYTHON  the `python` input: an interpreter the workflow set up with the app
#                        installed; ci-eval is installed into it. Empty: the private venv.
#   CI_EVAL_PYTHON       setup-python's interpreter, for the private venv
#   CI_EVAL_VENV         where the private venv lives (the path actions/cache restores)
#   CI_EVAL_CACHE_HIT    "true" when actions/cache restored that venv for this exact key
#   CI_EVAL_EXTRA        the `extra-requirements` input: a requirements file, installed too
# pip's own PIP_* variables (an index mirror, say) apply to every install.
set -euo pipefail

fail() {
  echo "::error title=ci-eval::$1"
  exit 2
}

pip_quiet=(--quiet --disable-pip-version-check)
# An absolute path: pip reads a bare "src" as the name of a package on the index.
CI_EVAL_SOURCE=$(cd "${CI_EVAL_SOURCE:?the action checkout}" && pwd)

cache_key() {
  local version digest
  version=$("$CI_EVAL_PYTHON" -c 'import platform, sys; print(platform.python_version(), sys.base_prefix)')
  # The pinned requirements, the extra ones, the exact interpreter (a venv points at it) and
  # ci-eval's own files: a hit is the whole environment, ci-eval included, with nothing to do.
  digest=$({
    cat "$CI_EVAL_SOURCE/requirements/action.txt"
    if [ -n "${CI_EVAL_EXTRA:-}" ]; then cat "$CI_EVAL_EXTRA"; fi
    echo "$version"
    (cd "$CI_EVAL_SOURCE" && find ci_eval pyproject.toml -type f ! -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -c1-16)
  echo "key=ci-eval-venv-${RUNNER_OS:-os}-${RUNNER_ARCH:-arch}-py${version%% *}-$digest" >> "$GITHUB_OUTPUT"
}

# The interpreter the workflow set up (after `uv sync`, `pip install -e .`, `poetry install`):
# ci-eval and its dependencies go into it, resolved against what the app already pinned.
install_into_user_python() {
  local py
  py=$(command -v "$CI_EVAL_USER_PYTHON" || true)
  [ -n "$py" ] && [ -x "$py" ] || fail "python input: no interpreter at '$CI_EVAL_USER_PYTHON'"
  py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")"  # absolute, the venv's symlink kept
  local install
  if "$py" -m pip --version > /dev/null 2>&1; then
    install=("$py" -m pip install "${pip_quiet[@]}")
  elif command -v uv > /dev/null; then  # a uv-made environment has no pip
    install=(uv pip install --quiet --python "$py")
  else
    fail "python input: '$py' has no pip and uv is not on PATH"
  fi
  "${install[@]}" "$CI_EVAL_SOURCE"
  if [ -n "${CI_EVAL_EXTRA:-}" ]; then
    "${install[@]}" -r "$CI_EVAL_EXTRA"
  fi
  echo "python=$py" >> "$GITHUB_OUTPUT"
}

# The default: a private venv, restored by actions/cache when the key matches.
install_private_venv() {
  local venv="$CI_EVAL_VENV"
  if [ "${CI_EVAL_CACHE_HIT:-}" = "true" ] && "$venv/bin/python" -c "import ci_eval, github, jsonschema, msgspec, numpy, tabulate" 2> /dev/null; then
    echo "ci-eval: environment restored from the cache: nothing to install"
  else
    rm -rf "$venv"
    "$CI_EVAL_PYTHON" -m venv "$venv"
    "$venv/bin/python" -m pip install "${pip_quiet[@]}" -r "$CI_EVAL_SOURCE/requirements/action.txt"
    if [ -n "${CI_EVAL_EXTRA:-}" ]; then
      "$venv/bin/python" -m pip install "${pip_quiet[@]}" -r "$CI_EVAL_EXTRA"
    fi
    "$venv/bin/python" -m pip install "${pip_quiet[@]}" --no-deps "$CI_EVAL_SOURCE"
  fi
  echo "python=$venv/bin/python" >> "$GITHUB_OUTPUT"
}

case "${1:-}" in
  key) cache_key ;;
  install)
    if [ -n "${CI_EVAL_USER_PYTHON:-}" ]; then install_into_user_python; else install_private_venv; fi ;;
  *) fail "usage: install.sh key|install" ;;
esac
