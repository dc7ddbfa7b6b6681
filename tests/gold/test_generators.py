"""The generators' adapters: the chat-completions client's retries, Retry-After, the budget."""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from chat_standin import ChatStandIn

from ci_eval.errors import InputError
from ci_eval.gold.generators import Budget, BudgetSpent, ChatEndpoint, chat_url, retry_after


def test_429_and_503_are_retried_honouring_retry_after_else_backing_off():
    waits: list[float] = []
    with ChatStandIn() as api:
        api.script(("status", 429, "Rate limit reached", {"Retry-After": "7"}),
                   ("status", 503, "overloaded", {}), ("status", 500, "oops", {}))
        endpoint = ChatEndpoint(api.url, "m1", None, retries=4, backoff=0.5, sleep=waits.append)
        assert json.loads(endpoint.ask("Passage:\nwing stall lift", Budget(10)))["questions"]
    # 7 from Retry-After; then 0.5 * 2**1 and 0.5 * 2**2 for the next two failures
    assert waits == [7.0, 1.0, 2.0] and len(api.requests) == 4


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after(later) <= 30


def test_a_base_url_or_the_full_address_both_reach_chat_completions():
    assert chat_url("http://h/v1/") == "http://h/v1/chat/completions" == chat_url("http://h/v1/chat/completions")


def test_retries_count_against_the_budget_and_give_up_with_the_last_problem():
    with ChatStandIn() as api:
        api.script(*[("status", 503, "overloaded", {})] * 3)
        # the budget spent while one answer is retried is that answer's failure, named
        with pytest.raises(InputError, match="HTTP 503: overloaded .the request budget ran out after 2 attempt"):
            ChatEndpoint(api.url, "m1", None, retries=5, backoff=0, sleep=lambda s: None).ask("x", Budget(2))
        assert len(api.requests) == 2
        spent = Budget(1)
        spent.take()
        with pytest.raises(BudgetSpent):  # spent between answers: a clean stop
            ChatEndpoint(api.url, "m1", None, retries=5, backoff=0, sleep=lambda s: None).ask("x", spent)
        assert len(api.requests) == 2
        api.queue.clear()
        api.script(*[("status", 503, "overloaded", {})] * 3)
        with pytest.raises(InputError, match="HTTP 503: overloaded .after 3 attempts"):
            ChatEndpoint(api.url, "m1", None, retries=2, backoff=0, sleep=lambda s: None).ask("x", Budget(9))
