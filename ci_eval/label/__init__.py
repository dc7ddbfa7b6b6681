"""`ci-eval label`: a page on 127.0.0.1 that walks a person through judging pooled chunks and
writes every decision through to the gold set (store.py), from pools and chunk texts built
by sources.py, served by server.py from the static assets in static/."""
