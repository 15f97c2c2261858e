"""The worker's command stream (`dataflow.worker._Commands`): fast-path peeks that arrive while
a command is being handled are taken out early, so a read of a view is answered once that view
has stepped rather than once every dataflow has; but a peek never overtakes another command
sent before it, nor is taken before its collection exists here."""

from __future__ import annotations

import socket
import time

from dataflow.fast_peek import FastPeekPlan
from dataflow.plan import Get
from dataflow.protocol import DropDataflow, FastPeek, FastPeeks, Shutdown
from dataflow.transport import send_frame
from dataflow.types import INT8
from dataflow.worker import _Commands


def _peek(id: str, source: str) -> FastPeek:
    return FastPeek(id, FastPeekPlan(source, (INT8,), Get(source, (INT8,))), 5)


def _settle() -> None:
    time.sleep(0.05)  # (the frames are on a local socket pair: delivered by now)


def test_peeks_arriving_with_nothing_queued_are_taken_early():
    a, b = socket.socketpair()
    commands = _Commands(b)
    send_frame(a, FastPeeks([_peek("p1", "u1"), _peek("p2", "u1")]))
    send_frame(a, FastPeeks([_peek("p3", "u2")]))
    _settle()
    assert [p.id for p in commands.arrived_peeks(lambda p: True)] == ["p1", "p2", "p3"]
    assert commands.arrived_peeks(lambda p: True) == []      # nothing more has come


def test_a_peek_never_overtakes_a_command_sent_before_it():
    a, b = socket.socketpair()
    commands = _Commands(b)
    send_frame(a, DropDataflow("d1"))
    send_frame(a, FastPeeks([_peek("p1", "u1")]))
    _settle()
    assert commands.arrived_peeks(lambda p: True) == []
    assert commands.next() == DropDataflow("d1")
    assert isinstance(commands.next(), FastPeeks)             # in order, after it


def test_a_peek_of_a_collection_not_here_yet_waits_in_order():
    a, b = socket.socketpair()
    commands = _Commands(b)
    send_frame(a, FastPeeks([_peek("p1", "u1"), _peek("p2", "u9")]))   # u9: created by a later step
    send_frame(a, FastPeeks([_peek("p3", "u1")]))
    send_frame(a, Shutdown())
    _settle()
    assert commands.arrived_peeks(lambda p: p.plan.source == "u1") == []
    first = commands.next()
    assert isinstance(first, FastPeeks) and [p.id for p in first.peeks] == ["p1", "p2"]
    assert [p.id for p in commands.next().peeks] == ["p3"]
    assert isinstance(commands.next(), Shutdown)
