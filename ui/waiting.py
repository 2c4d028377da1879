"""The chat's wait for the model: shown from the first second ("Waiting for llama3.1:8b, 12 s"), and stoppable.

The answer stream yields "" about every quarter second while the model is silent (rag/answer/stream.py), so the
script thread gets control back and redraws the waiting line; Streamlit draws from that thread only. Beside the
line, a button stops the model and answers from the filings instead.

A click starts a new run (in a new thread: Streamlit's fast reruns), and the run that was streaming is told to
stop, which it does at its next redraw. So the answer in flight is kept in session state as a Flight: the click's
callback stops its stream and takes the flight over (the old run, which steps the stream under the flight's
lock, steps it no more), and the new run goes on iterating the very same stream (`take_stopped`), which now
yields the extractive answer. A flight found at the start of a run without a stop request was interrupted by
something else: it is taken over, its stream stopped and closed, and the question shows as interrupted, as before.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field

import streamlit as st

from .text import safe_inline

K_FLIGHT = "_answer_in_flight"
K_STOP = "_answer_stop_requested"
STOP_LABEL = "Stop and answer from the filings"


@dataclass
class Flight:
    """An answer being streamed: its stream, the one iterator over it, and what storing the answer needs."""

    stream: object  # the engine's answer stream (.waiting, .stop(), .result)
    conv_id: str
    question: str
    request: dict
    pieces: Iterator[str] = field(init=False)
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    taken_over: bool = False  # a later run finishes (or drops) the answer: the run that began it must not go on
    _turn: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        self.pieces = iter(self.stream)

    def next_piece(self) -> str | None:
        """The next piece for the run that began the answer; None at the end, or once a later run took over."""
        with self._turn:
            if self.taken_over:
                return None
            return next(self.pieces, None)

    def take_over(self) -> None:
        """From a later run: the run that began the answer steps the stream no more (waits for its current step)."""
        with self._turn:
            self.taken_over = True


def begin(stream, *, conv_id: str, question: str, request: dict) -> Flight:
    """Record the answer now streaming, so a stop clicked while it waits can finish it on the next run."""
    flight = Flight(stream, conv_id, question, request)
    st.session_state[K_FLIGHT] = flight
    st.session_state.pop(K_STOP, None)
    return flight


def end() -> None:
    """The answer is stored: nothing is in flight any more."""
    st.session_state.pop(K_FLIGHT, None)
    st.session_state.pop(K_STOP, None)


def take_stopped(conv_id: str | None) -> Flight | None:
    """At the start of a run: the flight whose wait the user stopped (in this conversation), to finish now. Any other
    flight left by an interrupted run is stopped and closed, so its request to the model ends."""
    flight = st.session_state.get(K_FLIGHT)
    stop = st.session_state.pop(K_STOP, None)
    if flight is None:
        return None
    if stop == flight.token and flight.conv_id == conv_id:
        return flight
    end()
    flight.stream.stop()
    flight.take_over()
    with suppress(Exception):  # a generator that never started, or already ended
        flight.pieces.close()
    return None


def _request_stop(token: str) -> None:
    """The stop button's callback (it runs before the next run): stop the stream at once, finish it next run."""
    flight = st.session_state.get(K_FLIGHT)
    if flight is not None and flight.token == token:
        flight.stream.stop()
        flight.take_over()
        st.session_state[K_STOP] = token


def wait_line(wait) -> str:
    """The waiting line for a WaitState: the model name is escaped (it comes from settings or the sidebar)."""
    return (f":material/hourglass_top: Waiting for **{safe_inline(wait.model)}**, {int(wait.seconds)} s: it has "
            "sent nothing yet (a model that is loading can take a minute).")


def watched(flight: Flight) -> Iterator[str]:
    """The flight's text pieces (for st.write_stream). While the model is silent, a line above the answer says for
    how long, redrawn every second, with a button that stops it and answers from the filings."""
    line, button = st.empty(), st.empty()
    return _watch(flight, line, button)


def _watch(flight: Flight, line, button) -> Iterator[str]:
    shown = None
    while (piece := flight.next_piece()) is not None:
        wait = flight.stream.waiting
        if piece or wait is None:
            if shown is not None:
                line.empty()
                button.empty()
                shown = None
            if piece:
                yield piece
            continue
        text = wait_line(wait)
        if shown is None:
            button.button(STOP_LABEL, key=f"stop_wait_{flight.token}", icon=":material/stop_circle:",
                          type="secondary", on_click=_request_stop, args=(flight.token,),
                          help="Stop waiting for the model: the answer quotes the filings' passages instead.")
        if text != shown:
            line.caption(text)
            shown = text


def show_cut_caption(result: dict) -> None:
    """The caption under an answer that ended early, saying why (cut_reason; older answers have none)."""
    reason = result.get("cut_reason")
    if reason == "deadline":
        st.caption(":material/timer_off: The model took longer than the time allowed for a whole answer "
                   "(RAG_LLM_DEADLINE) and was cut there; the text above is what arrived.")
    elif reason == "stopped":
        st.caption(":material/stop_circle: You stopped this answer; the text above is what arrived.")
    else:
        st.caption(":material/content_cut: The answer stream was cut off; the text above is what arrived.")
